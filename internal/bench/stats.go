package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// row is one line of the result table: the product's and the baseline's
// number for each repeat (paired: product[i] and baseline[i] were measured
// back to back) and the goal of their ratio.
type row struct {
	figure string // "1", "4a", ...
	name   string
	unit   string
	// higherBetter is true for throughputs, false for times and sizes.
	higherBetter bool
	product      []float64
	baseline     []float64
	// baselineName says what the baseline is, for the notes under the
	// table.
	baselineName string
	// goal is the least acceptable ratio (oriented so that higher is
	// better); 0 means none.
	goal float64
	// absolute, when set, judges the product's median on its own (for
	// figures whose goal is a number, not a ratio) and returns the goal's
	// text.
	absolute func(median float64) (ok bool, goal string)
}

// ratios returns the per-repeat ratios, oriented so that higher is better.
func (r *row) ratios() []float64 {
	var out []float64
	for i := range min(len(r.product), len(r.baseline)) {
		p, b := r.product[i], r.baseline[i]
		if p <= 0 || b <= 0 {
			continue
		}
		if r.higherBetter {
			out = append(out, p/b)
		} else {
			out = append(out, b/p)
		}
	}
	return out
}

// median returns the median of xs (the mean of the middle two for an even
// count), or NaN when xs is empty.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// worst returns the worst of xs: the least when higher is better, else the
// greatest.
func worst(xs []float64, higherBetter bool) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	if higherBetter {
		return slices.Min(xs)
	}
	return slices.Max(xs)
}

// percentile returns the p-th percentile (0 < p <= 100) of durations by the
// nearest-rank method.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	k := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[max(0, min(k, len(s)-1))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// format renders v in unit.
func format(v float64, unit string) string {
	if math.IsNaN(v) {
		return "-"
	}
	switch {
	case v >= 1000:
		return commas(int64(math.Round(v))) + " " + unit
	case v >= 100:
		return fmt.Sprintf("%.0f %s", v, unit)
	case v >= 10:
		return fmt.Sprintf("%.1f %s", v, unit)
	default:
		return fmt.Sprintf("%.2f %s", v, unit)
	}
}

func commas(n int64) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// status returns the goal text and whether r meets it.
func (r *row) status() (goal string, ok bool) {
	ok = true
	var parts []string
	if r.goal > 0 {
		rm := median(r.ratios())
		ok = rm >= r.goal
		parts = append(parts, fmt.Sprintf("ratio >= %.2g", r.goal))
	}
	if r.absolute != nil {
		aok, text := r.absolute(median(r.product))
		ok = ok && aok
		parts = append(parts, text)
	}
	return strings.Join(parts, ", "), ok
}

// printTable writes the rows as an aligned table, then the baselines.
func printTable(w io.Writer, rows []*row) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tfigure\tproduct median (worst)\tbaseline median (worst)\tratio median (worst)\tgoal\t")
	for _, r := range rows {
		rs := r.ratios()
		goal, ok := r.status()
		mark := "ok"
		if !ok {
			mark = "NOT MET"
		}
		if goal == "" {
			mark = ""
		}
		fmt.Fprintf(tw, "%s\t%s\t%s (%s)\t%s (%s)\t%.2f (%.2f)\t%s %s\t\n", r.figure, r.name,
			format(median(r.product), r.unit), format(worst(r.product, r.higherBetter), r.unit),
			format(median(r.baseline), r.unit), format(worst(r.baseline, r.higherBetter), r.unit),
			median(rs), worst(rs, true), goal, mark)
	}
	_ = tw.Flush()
	fmt.Fprintln(w, "\nbaselines:")
	seen := map[string]bool{}
	for _, r := range rows {
		if r.baselineName == "" || seen[r.figure[:1]+r.baselineName] {
			continue
		}
		seen[r.figure[:1]+r.baselineName] = true
		fmt.Fprintf(w, "  %s: %s\n", r.figure, r.baselineName)
	}
}
