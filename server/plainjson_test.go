package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"pvebill/modules/provision"
)

type plainKind string

// plainSample has every field shape decodePlain fills, plus fields it must leave alone.
type plainSample struct {
	ID       string    `json:"id"`
	Name     string    `json:"name,omitempty"`
	Kind     plainKind `json:"kind"`
	Tags     []string  `json:"tags"`
	NoTag    string
	Skipped  string `json:"-"`
	internal string // unexported: never decoded
}

// encodingJSON decodes the way bindJSON does when decodePlain declines.
func encodingJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("trailing data")
	}
	return nil
}

var plainSeeds = []string{
	`{}`, ` { } `, `{"id":"a"}`, `{"id":"a","name":"b","kind":"c","tags":["x","y"],"NoTag":"n"}`,
	`{"id":"a","id":"b"}`, `{"ID":"a"}`, `{"notag":"a"}`, `{"id":null}`, `{"tags":null}`, `{"tags":[]}`,
	`{"tags":[ "a" , "b" ]}`, `{"tags":["a",1]}`, `{"tags":[["a"]]}`, `{"id":1}`, `{"id":true}`, `{"id":{}}`,
	`{"id":"a\"b"}`, `{"id":"a\u0041"}`, `{"id":"\n"}`, "{\"id\":\"a\tb\"}", `{"id":"ä"}`, "{\"id\":\"\xff\"}",
	`{"id":"a"} `, `{"id":"a"}x`, `{"id":"a"}{}`, `{"id":"a",}`, `{"id" "a"}`, `{"id":"a"`, `{"unknown":"a"}`,
	`{"-":"a"}`, `{"Skipped":"a"}`, `{"internal":"a"}`, `[]`, `"a"`, `null`, "\t{\"id\":\"a\"}\r\n",
	`{"id":"a","tags":["x"],"tags":["y"]}`, `{"kind":"vm"}`, `{"id":"` + strings.Repeat("z", 300) + `"}`,
	`{"name":"\u2028"}`, "{\"name\":\"\u2028\"}", `{"id":"a","id":null}`, `{"\u0069d":"a"}`,
}

func TestDecodePlainMatchesEncodingJSON(t *testing.T) {
	for _, s := range plainSeeds {
		checkPlain(t, []byte(s))
	}
}

// FuzzDecodePlain: whatever decodePlain accepts, encoding/json (as bindJSON runs it) accepts
// too and decodes to the same value, from a zero and from a filled struct; whatever it
// declines it leaves untouched.
func FuzzDecodePlain(f *testing.F) {
	for _, s := range plainSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkPlain)
}

func checkPlain(t *testing.T, data []byte) {
	filled := plainSample{ID: "old", Name: "old", Kind: "old", Tags: []string{"old"}, NoTag: "old", Skipped: "old"}
	for _, start := range []plainSample{{}, filled} {
		got, want := start, start
		got.Tags, want.Tags = append([]string(nil), start.Tags...), append([]string(nil), start.Tags...)
		if !decodePlain(data, &got) {
			if !reflect.DeepEqual(got, start) {
				t.Fatalf("%q: declined but wrote %+v", data, got)
			}
			continue
		}
		if err := encodingJSON(data, &want); err != nil {
			t.Fatalf("%q: decodePlain accepted what encoding/json refuses: %v", data, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: decodePlain gave %#v, encoding/json %#v", data, got, want)
		}
	}
}

// The request bodies of the hot routes take the plain path (else the saving is silently lost).
func TestDecodePlainTakesRequestBodies(t *testing.T) {
	body := []byte(`{"service_id":"whmcs-1","plan":"ct-small","hostname":"web1.example.com","os":"debian-12",` +
		`"root_password":"Sup3r-Secret-Root-pw","ssh_keys":["ssh-ed25519 AAAA a@example"]}`)
	var got, want provision.CreateRequest
	if !decodePlain(body, &got) {
		t.Fatal("a create body was not decoded by decodePlain")
	}
	if err := encodingJSON(body, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decodePlain gave %#v, encoding/json %#v", got, want)
	}
	type withNumber struct {
		N int `json:"n"`
	}
	if decodePlain([]byte(`{}`), &withNumber{}) {
		t.Fatal("a struct with a number field was taken")
	}
}
