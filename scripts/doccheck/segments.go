package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"strings"
)

// kind is how a file's text is read.
type kind int

const (
	kindNone  kind = iota // not read
	kindGo                // comments and string literals, from the parsed file
	kindProse             // the whole text (Markdown, YAML)
	kindHash              // comments start with #
	kindSQL               // comments start with --
	kindPHP               // //, # and /* */ comments
)

// kindOf picks the reading for a slash-separated path relative to the repository root.
func kindOf(rel string) kind {
	base := path.Base(rel)
	switch {
	case strings.HasSuffix(base, ".go"):
		return kindGo
	case strings.HasSuffix(base, ".md"), strings.HasSuffix(base, ".yaml"), strings.HasSuffix(base, ".yml"):
		return kindProse
	case strings.HasSuffix(base, ".sql"):
		return kindSQL
	case strings.HasSuffix(base, ".php"):
		return kindPHP
	case strings.HasSuffix(base, ".sh"), base == "Makefile", rel == ".ci/run":
		return kindHash
	}
	return kindNone
}

// segments splits a file into the pieces that are checked.
func segments(rel string, src []byte) ([]segment, error) {
	switch k := kindOf(rel); k {
	case kindGo:
		return goSegments(rel, src)
	case kindProse:
		return []segment{{line: 1, text: string(src), rules: true, refs: true}}, nil
	case kindNone:
		return nil, nil
	default:
		return lineSegments(string(src), k), nil
	}
}

// goSegments gives each comment group (rule ids and citations) and each string literal
// (citations only) of a Go file.
func goSegments(rel string, src []byte) ([]segment, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, rel, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []segment
	for _, g := range f.Comments {
		out = append(out, commentGroup(fset, g))
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			out = append(out, segment{line: fset.Position(lit.Pos()).Line, text: lit.Value, refs: true})
		}
		return true
	})
	return out, nil
}

// commentGroup joins a group's comments without their markers, one text line per source
// line, so that a citation broken over two comment lines is still read as one.
func commentGroup(fset *token.FileSet, g *ast.CommentGroup) segment {
	first := fset.Position(g.Pos()).Line
	var b strings.Builder
	line := first
	for _, c := range g.List {
		at := fset.Position(c.Pos()).Line
		if at > line {
			b.WriteString(strings.Repeat("\n", at-line))
		} else if b.Len() > 0 {
			b.WriteByte(' ')
		}
		text := strings.TrimPrefix(c.Text, "//")
		if strings.HasPrefix(c.Text, "/*") {
			text = strings.TrimSuffix(strings.TrimPrefix(c.Text, "/*"), "*/")
		}
		b.WriteString(text)
		line = at + strings.Count(c.Text, "\n")
	}
	return segment{line: first, text: b.String(), rules: true, refs: true}
}

// lineSegments reads a line-comment language: every run of consecutive comment lines is one
// segment (rule ids and citations); every line is also checked whole for citations of files
// outside the repository, which covers strings.
func lineSegments(src string, k kind) []segment {
	var out []segment
	var run []string
	runStart := 0
	flush := func() {
		if len(run) > 0 {
			out = append(out, segment{line: runStart, text: strings.Join(run, "\n"), rules: true, refs: true})
			run = nil
		}
	}
	state := outsideBlock
	for i, line := range strings.Split(src, "\n") {
		out = append(out, segment{line: i + 1, text: line, refs: true})
		var comment string
		comment, state = commentOf(line, k, state)
		if comment == "" {
			flush()
			continue
		}
		if len(run) == 0 {
			runStart = i + 1
		}
		run = append(run, comment)
	}
	flush()
	return out
}

// blockState is whether a line starts inside a /* */ comment block.
type blockState bool

const (
	outsideBlock blockState = false
	insideBlock  blockState = true
)

// commentOf is the comment part of a line ("" when none) and whether a /* */ block is still
// open after it. Comment markers inside quotes do not count.
func commentOf(line string, k kind, state blockState) (string, blockState) {
	if state == insideBlock {
		end := strings.Index(line, "*/")
		if end < 0 {
			return line, insideBlock
		}
		rest, open := commentOf(line[end+2:], k, outsideBlock)
		return strings.TrimSpace(line[:end] + " " + rest), open
	}
	var quote byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0:
			switch c {
			case '\\':
				i++
			case quote:
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case startsComment(line, i, k):
			return line[i:], outsideBlock
		case k == kindPHP && strings.HasPrefix(line[i:], "/*"):
			return commentOf(line[i+2:], k, insideBlock)
		}
	}
	return "", outsideBlock
}

// startsComment says whether a line comment of kind k starts at line[i].
func startsComment(line string, i int, k kind) bool {
	rest := line[i:]
	switch k {
	case kindHash:
		return rest[0] == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t')
	case kindSQL:
		return strings.HasPrefix(rest, "--")
	case kindPHP:
		return strings.HasPrefix(rest, "//") || rest[0] == '#'
	}
	return false
}
