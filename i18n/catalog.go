package i18n

import (
	"embed"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Languages are the languages pvebill answers in; the first is the fallback.
var Languages = []string{"en", "de", "es", "fr", "it", "nl", "pl", "pt", "tr"}

//go:embed locales/*.json
var localeFS embed.FS

var catalogs = mustLoad()

func mustLoad() map[string]map[string]string {
	out := make(map[string]map[string]string, len(Languages))
	for _, lang := range Languages {
		raw, err := localeFS.ReadFile("locales/" + lang + ".json")
		if err != nil {
			panic(fmt.Sprintf("i18n: catalog %s missing: %v", lang, err))
		}
		m := map[string]string{}
		if err := json.Unmarshal(raw, &m); err != nil {
			panic(fmt.Sprintf("i18n: catalog %s: %v", lang, err))
		}
		out[lang] = m
	}
	return out
}

// Lookup returns the raw template for key in lang, and whether it exists there.
func Lookup(lang, key string) (string, bool) {
	s, ok := catalogs[lang][key]
	return s, ok
}

// T translates key into lang (falling back to English, then to the key itself) and fills the
// {name} placeholders from params.
func T(lang, key string, params map[string]string) string {
	s, ok := catalogs[lang][key]
	if !ok || s == "" {
		s, ok = catalogs["en"][key]
		if !ok {
			return key
		}
	}
	if len(params) == 0 || !strings.Contains(s, "{") {
		return s
	}
	pairs := make([]string, 0, 2*len(params))
	for k, v := range params {
		pairs = append(pairs, "{"+k+"}", v)
	}
	return strings.NewReplacer(pairs...).Replace(s)
}

// Negotiate picks the best supported language from an Accept-Language header (RFC 9110 quality
// values, primary subtag match), falling back to English.
func Negotiate(header string) string {
	best, bestQ := "en", -1.0
	for _, part := range strings.Split(header, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		tag, q := part, 1.0
		if semi := strings.IndexByte(part, ';'); semi >= 0 {
			tag = strings.TrimSpace(part[:semi])
			for _, p := range strings.Split(part[semi+1:], ";") {
				p = strings.TrimSpace(p)
				if v, ok := strings.CutPrefix(p, "q="); ok {
					f, err := strconv.ParseFloat(v, 64)
					if err != nil || f < 0 || f > 1 {
						f = 0
					}
					q = f
				}
			}
		}
		primary := strings.ToLower(tag)
		if dash := strings.IndexByte(primary, '-'); dash >= 0 {
			primary = primary[:dash]
		}
		if q <= 0 {
			continue
		}
		if _, ok := catalogs[primary]; !ok {
			continue
		}
		if q > bestQ { // equal quality: the earlier entry wins
			best, bestQ = primary, q
		}
	}
	return best
}

// Detail is the translated detail of a problem.
func (p *Problem) Detail(lang string) string {
	return T(lang, "error."+string(p.Code), p.Params)
}

// ReasonMessage is the translated Reason ("" without one).
func (p *Problem) ReasonMessage(lang string) string {
	if p.Reason == "" {
		return ""
	}
	return T(lang, p.Reason, nil)
}

// Message is the translated message of a field error.
func (f FieldError) Message(lang string) string {
	return T(lang, "field."+string(f.Code), map[string]string{"field": f.Field, "param": f.Param})
}

// Message is the translated phrase of a blocker.
func (b Blocker) Message(lang string) string {
	return T(lang, "blocker."+b.Code, b.Params)
}
