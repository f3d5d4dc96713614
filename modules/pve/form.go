package pve

import (
	"fmt"
	"net/url"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// encodeForm turns a request struct into Proxmox parameters. Fields carry a
// `pve:"name[,option]"` tag; untagged fields and `pve:"-"` are skipped.
//
// Only set fields are sent:
//   - string, int, float64: sent when not the zero value;
//   - bool: sent as "1" when true, omitted when false (for flags such as purge);
//   - *string, *int, *float64, *bool: sent whenever non-nil, zero included, so
//     swap=0 or onboot=0 can be sent on purpose (booleans as "1"/"0");
//   - []string with option "list": joined with commas, sent when non-empty;
//   - map[int]string with option "indexed": one parameter per entry, the tag
//     name followed by the index (net0, mp1, ...).
func encodeForm(req any) (url.Values, error) {
	out := url.Values{}
	if req == nil {
		return out, nil
	}
	v := reflect.ValueOf(req)
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return out, nil
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return nil, fmt.Errorf("pve: encode form: %s is not a struct", v.Type())
	}
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, ok := f.Tag.Lookup("pve")
		if !ok || tag == "-" || !f.IsExported() {
			continue
		}
		name, opt, _ := strings.Cut(tag, ",")
		if err := encodeField(out, name, opt, v.Field(i)); err != nil {
			return nil, fmt.Errorf("pve: encode form field %s: %w", f.Name, err)
		}
	}
	return out, nil
}

func encodeField(out url.Values, name, opt string, fv reflect.Value) error {
	switch opt {
	case "list":
		if fv.Kind() != reflect.Slice || fv.Type().Elem().Kind() != reflect.String {
			return fmt.Errorf("option list needs []string, have %s", fv.Type())
		}
		if fv.Len() > 0 {
			items := make([]string, fv.Len())
			for i := range items {
				items[i] = fv.Index(i).String()
			}
			out.Set(name, strings.Join(items, ","))
		}
		return nil
	case "indexed":
		if fv.Kind() != reflect.Map || fv.Type().Key().Kind() != reflect.Int || fv.Type().Elem().Kind() != reflect.String {
			return fmt.Errorf("option indexed needs map[int]string, have %s", fv.Type())
		}
		keys := fv.MapKeys()
		sort.Slice(keys, func(a, b int) bool { return keys[a].Int() < keys[b].Int() })
		for _, k := range keys {
			if k.Int() < 0 {
				return fmt.Errorf("negative index %d", k.Int())
			}
			out.Set(name+strconv.FormatInt(k.Int(), 10), fv.MapIndex(k).String())
		}
		return nil
	case "":
	default:
		return fmt.Errorf("unknown option %q", opt)
	}

	if fv.Kind() == reflect.Pointer {
		if fv.IsNil() {
			return nil
		}
		s, err := scalarText(fv.Elem())
		if err != nil {
			return err
		}
		out.Set(name, s)
		return nil
	}
	if fv.IsZero() {
		return nil
	}
	s, err := scalarText(fv)
	if err != nil {
		return err
	}
	out.Set(name, s)
	return nil
}

func scalarText(v reflect.Value) (string, error) {
	switch v.Kind() {
	case reflect.String:
		return v.String(), nil
	case reflect.Bool:
		if v.Bool() {
			return "1", nil
		}
		return "0", nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(v.Uint(), 10), nil
	case reflect.Float32, reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'f', -1, 64), nil
	}
	return "", fmt.Errorf("unsupported type %s", v.Type())
}
