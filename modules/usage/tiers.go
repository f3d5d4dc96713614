package usage

import (
	"pvebill/models"
)

// Segment is a part [From, To) (unix seconds) of a report's period read from one tier.
type Segment struct {
	Tier     models.Tier
	From, To int64
}

// Plan splits the bucket starts [from, to) into the parts each read from the coarsest tier that
// covers them (R45): whole days already rolled up from the daily tier, whole hours already
// rolled up from the hourly one, and the ragged edges, the current hour and anything not yet
// rolled up from the 5-minute buckets. marks says how far each coarse tier is rolled up.
func Plan(from, to int64, marks map[models.Tier]int64) []Segment {
	if from >= to {
		return nil
	}
	if dayMark, ok := marks[models.Tier1d]; ok {
		d0, d1 := ceilTo(from, 86400), min(floorTo(to, 86400), dayMark)
		if d0 < d1 {
			out := planHours(nil, from, d0, marks)
			out = append(out, Segment{Tier: models.Tier1d, From: d0, To: d1})
			return planHours(out, d1, to, marks)
		}
	}
	return planHours(nil, from, to, marks)
}

// planHours appends the parts of [from, to) read from the hourly and 5-minute tiers.
func planHours(out []Segment, from, to int64, marks map[models.Tier]int64) []Segment {
	if from >= to {
		return out
	}
	if hourMark, ok := marks[models.Tier1h]; ok {
		h0, h1 := ceilTo(from, 3600), min(floorTo(to, 3600), hourMark)
		if h0 < h1 {
			out = appendSegment(out, Segment{Tier: models.Tier5m, From: from, To: h0})
			out = append(out, Segment{Tier: models.Tier1h, From: h0, To: h1})
			return appendSegment(out, Segment{Tier: models.Tier5m, From: h1, To: to})
		}
	}
	return append(out, Segment{Tier: models.Tier5m, From: from, To: to})
}

func appendSegment(out []Segment, s Segment) []Segment {
	if s.From < s.To {
		out = append(out, s)
	}
	return out
}

// ceilTo is the start of the first width-second period that starts at or after t.
func ceilTo(t, width int64) int64 { return -floorTo(-t, width) }

// mergeTotals adds the totals of another part of the period to a: counts and sums add, with
// nil only where neither knew the value; maxima are the larger.
func mergeTotals(a *models.UsageTotals, b models.UsageTotals) {
	a.Samples += b.Samples
	a.SwapSamples += b.SwapSamples
	a.SwapSum = sumOf(a.SwapSum, b.SwapSum)
	a.SwapMax = maxOf(a.SwapMax, b.SwapMax)
	a.MemSum = sumOf(a.MemSum, b.MemSum)
	a.MemMax = maxOf(a.MemMax, b.MemMax)
	if b.CPUSum != nil {
		if a.CPUSum == nil {
			a.CPUSum = ptr(*b.CPUSum)
		} else {
			a.CPUSum = ptr(*a.CPUSum + *b.CPUSum)
		}
	}
	a.DiskMax = maxOf(a.DiskMax, b.DiskMax)
	a.NetIn = sumOf(a.NetIn, b.NetIn)
	a.NetOut = sumOf(a.NetOut, b.NetOut)
}

// rollBuckets folds buckets (ordered by service and start) into width-second ones, the way the
// roll-up does (RollUp): the figures add up, the node and swap limit are the latest known.
func rollBuckets(rows []models.UsageBucket, width int64) []models.UsageBucket {
	var out []models.UsageBucket
	for _, r := range rows {
		start := floorTo(r.BucketStart, width)
		if n := len(out); n == 0 || out[n-1].Svc != r.Svc || out[n-1].ServiceID != r.ServiceID || out[n-1].BucketStart != start {
			out = append(out, models.UsageBucket{Svc: r.Svc, ServiceID: r.ServiceID, BucketStart: start})
		}
		o := &out[len(out)-1]
		o.Cluster, o.Node, o.VMID, o.GuestType = r.Cluster, r.Node, r.VMID, r.GuestType
		Merge(&o.UsageFigures, r.UsageFigures)
	}
	return out
}

// mergeBuckets merges two lists ordered by service and start, where every bucket of b starts
// after every bucket of a of the same service.
func mergeBuckets(a, b []models.UsageBucket) []models.UsageBucket {
	out := make([]models.UsageBucket, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		if j == len(b) || (i < len(a) && !serviceAfter(a[i], b[j])) {
			out = append(out, a[i])
			i++
		} else {
			out = append(out, b[j])
			j++
		}
	}
	return out
}

// serviceAfter reports whether bucket a's service sorts after bucket b's: by service id, then
// by key (services.id), the order the reads return.
func serviceAfter(a, b models.UsageBucket) bool {
	if a.ServiceID != b.ServiceID {
		return a.ServiceID > b.ServiceID
	}
	return a.Svc > b.Svc
}
