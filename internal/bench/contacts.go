package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ujumbe/messaging/store/driver"
)

// Figure 4: contact search on a workspace of 1,000,000 contacts, through
// GET /v1/contacts (httpapi on sqlitestore), one request at a time on a
// keep-alive connection: p50 and p99 of searches by name prefix, by phone
// digits and by email, and of deep pages of the unfiltered list. The goal
// is absolute (p50 <= 2 ms, p99 <= 20 ms). The baseline is the floor of
// serving the same page: reading the same rows by primary key with
// database/sql on a reader connection of the same file.

// searchKind is a family of queries.
type searchKind struct {
	name string
	gen  func(rng *rand.Rand, s *sample) string // the query string of GET /v1/contacts
}

// sample is a contact of the data set, read back to build queries.
type sample struct{ first, last, phone, email string }

func searchKinds(pages int) []searchKind {
	return []searchKind{
		{"name prefix", func(rng *rand.Rand, s *sample) string {
			f := driver.SearchFold(s.first)
			var q string
			switch x := rng.IntN(100); {
			case x < 10: // one letter: the broadest search
				q = string([]rune(f)[:1])
			case x < 35:
				q = prefixRunes(f, 2)
			case x < 60:
				l := driver.SearchFold(s.last)
				if l == "" {
					l = f
				}
				q = prefixRunes(l, 3)
			case x < 80:
				q = f
			default:
				q = f + " " + prefixRunes(driver.SearchFold(s.last), 2)
			}
			return "search=" + url.QueryEscape(strings.TrimSpace(q))
		}},
		{"phone digits", func(rng *rand.Rand, s *sample) string {
			d := driver.PhoneDigits(s.phone)
			d = d[:min(len(d), 5+rng.IntN(8))]
			switch rng.IntN(3) {
			case 0:
				d = "+" + d
			case 1:
				if len(d) > 6 {
					d = d[:3] + " " + d[3:6] + " " + d[6:]
				}
			}
			return "search=" + url.QueryEscape(d)
		}},
		{"email", func(rng *rand.Rand, s *sample) string {
			e := s.email
			switch rng.IntN(3) {
			case 0:
			case 1:
				e = e[:strings.IndexByte(e, '@')+1]
			default:
				e = e[:min(len(e), 6+rng.IntN(5))]
			}
			return "search=" + url.QueryEscape(e)
		}},
		{"deep pages", func(rng *rand.Rand, _ *sample) string {
			return fmt.Sprintf("page=%d&limit=25", 1+rng.IntN(pages))
		}},
	}
}

func prefixRunes(s string, n int) string {
	r := []rune(s)
	return string(r[:min(n, len(r))])
}

func runContacts(ctx context.Context, c *config) ([]*row, error) {
	cached, err := contactsDB(ctx, c, c.contacts)
	if err != nil {
		return nil, err
	}
	sc, err := serveCopy(ctx, c, cached, "contacts.sqlite")
	if err != nil {
		return nil, err
	}
	defer sc.close()
	path := sc.path
	base := sc.base + "/v1/contacts?"
	client := newClient(1)
	defer client.CloseIdleConnections()

	raw, err := sql.Open("sqlite3", "file:"+path+"?_query_only=1")
	if err != nil {
		return nil, err
	}
	defer raw.Close()
	raw.SetMaxOpenConns(1)
	samples, err := readSamples(ctx, raw, 2000)
	if err != nil {
		return nil, err
	}

	perKind := pick(c, 300, 40)
	kinds := searchKinds((c.contacts + 24) / 25)
	var rows []*row
	for ki, k := range kinds {
		rng := rand.New(rand.NewPCG(uint64(ki), 7))
		queries := make([]string, perKind)
		for i := range queries {
			queries[i] = k.gen(rng, &samples[rng.IntN(len(samples))])
		}
		p50 := &row{figure: fmt.Sprintf("4%c", 'a'+ki), name: fmt.Sprintf("contacts, %s: %s p50", commas(int64(c.contacts)), k.name), unit: "ms",
			absolute:     func(v float64) (bool, string) { return v <= 2, "p50 <= 2 ms" },
			baselineName: "the same page's rows read by primary key with database/sql (the floor of any page)"}
		p99 := &row{figure: p50.figure, name: fmt.Sprintf("contacts, %s: %s p99", commas(int64(c.contacts)), k.name), unit: "ms",
			absolute: func(v float64) (bool, string) { return v <= 20, "p99 <= 20 ms" }}
		// Warm up on the first queries.
		for _, q := range queries[:min(20, len(queries))] {
			if _, _, err := listContacts(ctx, client, base+q); err != nil {
				return nil, err
			}
		}
		var slowest string
		var slowestD time.Duration
		for range c.repeat {
			var prod, floor []time.Duration
			for _, q := range queries {
				t := time.Now()
				ids, _, err := listContacts(ctx, client, base+q)
				d := time.Since(t)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", q, err)
				}
				if d > slowestD {
					slowest, slowestD = q, d
				}
				prod = append(prod, d)
				t = time.Now()
				if err := readByID(ctx, raw, ids); err != nil {
					return nil, err
				}
				floor = append(floor, time.Since(t))
			}
			p50.product = append(p50.product, ms(percentile(prod, 50)))
			p50.baseline = append(p50.baseline, ms(percentile(floor, 50)))
			p99.product = append(p99.product, ms(percentile(prod, 99)))
			p99.baseline = append(p99.baseline, ms(percentile(floor, 99)))
		}
		c.logf("contacts %s: p50 %.2f ms, p99 %.2f ms; slowest %q %s", k.name, median(p50.product), median(p99.product), slowest, slowestD)
		rows = append(rows, p50, p99)
	}
	return rows, nil
}

// readSamples reads n contacts spread over the data set.
func readSamples(ctx context.Context, db *sql.DB, n int) ([]sample, error) {
	var max int64
	if err := db.QueryRowContext(ctx, `SELECT max(rowid) FROM contacts`).Scan(&max); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var out []sample
	for len(out) < n {
		var s sample
		err := db.QueryRowContext(ctx, `SELECT first_name, last_name, phone, email FROM contacts WHERE rowid >= ? AND workspace_id = ? LIMIT 1`,
			1+rng.Int64N(max), benchWorkspace).Scan(&s.first, &s.last, &s.phone, &s.email)
		if err == sql.ErrNoRows {
			continue
		}
		if err != nil {
			return nil, err
		}
		if s.phone == "" || s.email == "" {
			continue // every kind of query can use every sample
		}
		out = append(out, s)
	}
	return out, nil
}

// listContacts runs GET /v1/contacts and returns the ids of the page and
// the total.
func listContacts(ctx context.Context, client *http.Client, url string) ([]string, int, error) {
	status, body, err := do(ctx, client, "GET", url, "")
	if err != nil {
		return nil, 0, err
	}
	if status != 200 {
		return nil, 0, fmt.Errorf("status %d: %s", status, body)
	}
	var page struct {
		Items []struct {
			ID string `json:"id"`
		} `json:"items"`
		Total int `json:"total"`
	}
	if err := json.Unmarshal(body, &page); err != nil {
		return nil, 0, err
	}
	if len(page.Items) > 25 || page.Total < len(page.Items) {
		return nil, 0, fmt.Errorf("%d items of a total of %d", len(page.Items), page.Total)
	}
	ids := make([]string, len(page.Items))
	for i, it := range page.Items {
		ids[i] = it.ID
	}
	return ids, page.Total, nil
}

// readByID reads every column of the contacts with these ids: the floor of
// serving a page.
func readByID(ctx context.Context, db *sql.DB, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := db.QueryContext(ctx, `SELECT id, workspace_id, first_name, last_name, full_name, phone, email, email_key,
		company, job_title, website, notes, source, tags, lifecycle, version, created_at, updated_at
		FROM contacts WHERE id IN (`+strings.TrimSuffix(strings.Repeat("?,", len(ids)), ",")+`)`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var s [15]string
		var version int64
		var created, updated string
		dest := make([]any, 0, 18)
		for i := range s {
			dest = append(dest, &s[i])
		}
		dest = append(dest, &version, &created, &updated)
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		n++
	}
	if n != len(ids) {
		return fmt.Errorf("read %d of %d contacts by id", n, len(ids))
	}
	return rows.Err()
}
