// Command doccheck keeps the repository's comments honest about what they cite. Run from the
// repository root (make doccheck, part of make lint):
//
//	go run ./scripts/doccheck [-root DIR] [-skip DIR,...]
//
// It reads these files and fails (exit 1, one "file:line: reason" a finding) when
//
//   - a rule id R<n> is cited that docs/design.md does not define as a "### R<n> — title"
//     heading;
//   - a file outside the repository is cited: the out-of-tree names the design, the HTTP
//     contract, the Proxmox reference and the style notes had before they moved into docs/, a
//     path into the old shared documents folder, or a relative path that climbs out of the
//     repository;
//   - a docs/*.md file is cited that does not exist, or a "§N" of a docs/*.md file whose
//     numbered heading does not exist.
//
// What is read where:
//
//	.go                         comments (rule ids, citations) and string literals (citations)
//	.md, .yaml, .yml            the whole text: prose and descriptions
//	.php, .sql, .sh, Makefile,  comments (rule ids, citations) and the whole line (citations
//	.ci/run                     outside the repository, which also catches strings)
//
// Directories named .git, node_modules and vendor are not read, nor bin/ and data/ at the root
// (make build and make run write there), nor the -skip directories (by default this command's
// own testdata, which holds planted bad citations).
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"strings"
)

func main() {
	root := flag.String("root", ".", "repository root")
	skip := flag.String("skip", "scripts/doccheck/testdata", "comma-separated directories (relative to -root) not to read")
	flag.Parse()

	var skips []string
	for _, s := range strings.Split(*skip, ",") {
		if s = strings.TrimSpace(s); s != "" {
			skips = append(skips, s)
		}
	}
	stderr := log.New(os.Stderr, "doccheck: ", 0)
	findings, err := Run(*root, skips)
	if err != nil {
		stderr.Print(err)
		os.Exit(2)
	}
	for _, f := range findings {
		fmt.Println(f)
	}
	if len(findings) > 0 {
		stderr.Printf("%d finding(s)", len(findings))
		os.Exit(1)
	}
}
