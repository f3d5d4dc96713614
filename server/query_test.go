package server

import (
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"pvebill/i18n"
	"pvebill/modules/usage"
)

// R37: a query string binds to a struct with the one validator: a value of the wrong type is the
// field's type error, an out-of-range one the rule's code with its bound, an absent one leaves
// the field alone.
func TestBindQuery(t *testing.T) {
	for _, c := range []struct {
		query string
		want  string
		wait  *int
	}{
		{"", "", nil},
		{"wait=0", "", ptrInt(0)},
		{"wait=60", "", ptrInt(60)},
		{"wait=61", "wait:too_large:60", nil},
		{"wait=-1", "wait:too_small:0", nil},
		{"wait=abc", "wait:wrong_type:int", nil},
		{"wait=1.5", "wait:wrong_type:int", nil},
		{"other=1", "", nil},
	} {
		ctx, _ := gin.CreateTestContext(httptest.NewRecorder())
		ctx.Request = httptest.NewRequest("GET", "/x?"+c.query, nil)
		var q waitQuery
		fe := bindQuery(ctx, &q)
		if got := fieldText(fe); got != c.want {
			t.Errorf("%q: errors %q, want %q", c.query, got, c.want)
		}
		if c.want == "" && !reflect.DeepEqual(q.Wait, c.wait) {
			t.Errorf("%q: wait %v, want %v", c.query, q.Wait, c.wait)
		}
	}
}

// The series' points bound in its tag is usage's own bound.
func TestPointsQueryBoundIsUsages(t *testing.T) {
	f, _ := reflect.TypeOf(pointsQuery{}).FieldByName("Points")
	if !strings.Contains(f.Tag.Get("validate"), "max="+strconv.Itoa(usage.MaxSeriesPoints)) {
		t.Fatalf("points tag %q, usage.MaxSeriesPoints %d", f.Tag.Get("validate"), usage.MaxSeriesPoints)
	}
}

func ptrInt(n int) *int { return &n }

func fieldText(fe []i18n.FieldError) string {
	var parts []string
	for _, f := range fe {
		parts = append(parts, f.Field+":"+string(f.Code)+":"+f.Param)
	}
	return strings.Join(parts, " ")
}
