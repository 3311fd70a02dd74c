package main

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/httpapi"
	"github.com/ujumbe/messaging/store/sqlitestore"
)

// The contact data set: n contacts in the bench workspace (and a few in
// another workspace), generated deterministically and bulk-inserted into a
// database with the product's schema, then cached by size and schema.

// datasetVersion changes when the generator changes, to invalidate caches.
const datasetVersion = 1

var firstNames = strings.Fields(`Amina Otieno Wanjiru Kamau Achieng Mwangi Njeri Kiptoo Chebet Wafula Akinyi Mutua Atieno
	Ochieng Nyambura Kariuki Wambui Kimani Auma Odhiambo Zawadi Baraka Imani Juma Neema Faraja Rehema Salim Halima Hassan
	Fatuma Omar Aisha Ali Mariam Yusuf Grace John Mary Peter James Joseph Elizabeth David Sarah Daniel Esther Michael Ruth
	Samuel Faith Paul Joy Stephen Mercy Brian Ann Kevin Lucy Dennis Caroline Victor Diana Collins Irene Felix Janet Emmanuel
	Beatrice Moses Winnie George Sharon Patrick Agnes Charles Christine Robert Eunice Anthony Hellen Martin Gladys Edwin
	Nancy Oscar Purity Isaac Rose Eric Veronica Simon Teresa Frank Olivia Liam Emma Noah Ava Ethan Sophia Lucas Mia Mateo
	Chloe Hugo Léa Émile Zoé Chidi Ngozi Emeka Adaeze Tunde Funmilayo Kwame Ama Kofi Abena Thabo Naledi Sipho Lerato Tariq
	Leila Omar Yasmin Raj Priya Arjun Ananya Wei Mei Hiroshi Yuki Ivan Olga Carlos Lucia Diego Camila Pedro Beatriz`)

var lastNames = strings.Fields(`Otieno Kamau Mwangi Ochieng Kariuki Kimani Odhiambo Wanjiku Njoroge Mutua Kiprop Cheruiyot
	Wafula Barasa Omondi Owino Onyango Juma Hassan Mohamed Ali Abdi Wekesa Maina Karanja Githinji Macharia Ndungu Gitau Muriuki
	Nyaga Mugo Koech Rotich Langat Kibet Kirui Ngetich Korir Biwott Chege Kinyua Muthoni Waweru Njuguna Ruto Kenyatta Odinga
	Smith Johnson Williams Brown Jones Garcia Miller Davis Rodriguez Martinez Hernandez Lopez Gonzalez Wilson Anderson Thomas
	Taylor Moore Jackson Martin Lee Perez Thompson White Harris Sanchez Clark Ramirez Lewis Robinson Walker Young Allen King
	Wright Scott Torres Nguyen Hill Flores Green Adams Nelson Baker Hall Rivera Campbell Mitchell Carter Roberts Okafor Okeke
	Adeyemi Balogun Mensah Asante Boateng Owusu Nkosi Dlamini Khumalo Ndlovu Mokoena Naidoo Patel Shah Kumar Singh Wang Li
	Zhang Chen Liu Tanaka Suzuki Sato Ivanov Petrov Silva Santos Oliveira Souza Dubois Moreau Laurent Zola Müller Schmidt`)

var emailDomains = []string{"gmail.com", "yahoo.com", "outlook.com", "acme.co.ke", "safaricom.co.ke", "example.org", "mail.com", "company.africa"}

var companies = []string{"", "", "Acme Ltd", "Safari Tours", "Jua Kali Works", "Nairobi Traders", "Mombasa Shipping", "Umoja Bank", "Twiga Foods"}

// countryPrefixes are the E.164 prefixes of generated phones, before 8
// digits.
var countryPrefixes = []string{"+2547", "+2547", "+2547", "+2547", "+2547", "+2541", "+2556", "+2567", "+2348", "+1415"}

// genContact is one generated contact.
type genContact struct {
	id, first, last, phone, email, company, tags, lifecycle string
	created                                                 time.Time
}

// datasetStart is the creation time of the first contact; contacts are a
// minute apart, give or take.
var datasetStart = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// generate returns the i-th contact of the data set; rng must be the
// data set's generator, called in order of i.
func generate(rng *rand.Rand, i int) genContact {
	first := firstNames[rng.IntN(len(firstNames))]
	last := lastNames[rng.IntN(len(lastNames))]
	if rng.IntN(20) == 0 {
		last = ""
	}
	created := datasetStart.Add(time.Duration(i)*time.Minute + time.Duration(rng.IntN(59_000))*time.Millisecond)
	var u [16]byte
	binary.BigEndian.PutUint64(u[:8], uint64(created.UnixMilli())<<16|0x7000|uint64(rng.IntN(1<<12)))
	binary.BigEndian.PutUint64(u[8:], rng.Uint64()&0x3fffffffffffffff|0x8000000000000000)
	c := genContact{id: "ct_" + hex.EncodeToString(u[:]), first: first, last: last, created: created, tags: "[]",
		company: companies[rng.IntN(len(companies))]}
	// Distinct for distinct i (7919 is prime to 10^8).
	digits := fmt.Sprintf("%08d", (i*7919+12345)%100_000_000)
	switch rng.IntN(10) {
	case 0: // email only
	default:
		c.phone = countryPrefixes[i%len(countryPrefixes)] + digits
	}
	if c.phone == "" || rng.IntN(5) != 0 {
		local := strings.ToLower(first)
		if last != "" {
			local += "." + strings.ToLower(last)
		}
		c.email = fmt.Sprintf("%s%d@%s", local, i, emailDomains[rng.IntN(len(emailDomains))])
	}
	if rng.IntN(4) == 0 {
		c.tags = `["vip"]`
	}
	c.lifecycle = record.Lifecycles()[rng.IntN(len(record.Lifecycles()))]
	return c
}

// schemaHash fingerprints the product's schema, so that a cached data set
// is regenerated when a migration changes it.
func schemaHash(ctx context.Context, dir string) (string, error) {
	path := filepath.Join(dir, "schema.sqlite")
	st, err := sqlitestore.Open(ctx, path, nil)
	if err != nil {
		return "", err
	}
	if err := st.Close(); err != nil {
		return "", err
	}
	defer removeDB(path)
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		return "", err
	}
	defer db.Close()
	var schema string
	if err := db.QueryRowContext(ctx, `SELECT group_concat(coalesce(sql, ''), ';') FROM (SELECT sql FROM sqlite_master ORDER BY type, name)`).Scan(&schema); err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(schema))
	return hex.EncodeToString(sum[:6]), nil
}

// contactsDB returns the path of a cached database with n generated
// contacts in the bench workspace, generating it if needed.
func contactsDB(ctx context.Context, c *config, n int) (string, error) {
	return cachedDB(ctx, c, "contacts", n, datasetVersion, func(path string) error { return buildContactsDB(ctx, c, path, n) })
}

// cachedDB returns the path of the cached database of n generated kind
// records (generator version, the product's schema), generating it with
// build when missing; data sets of the same size for older schemas or
// generators are stale and removed.
func cachedDB(ctx context.Context, c *config, kind string, n, version int, build func(path string) error) (string, error) {
	h, err := schemaHash(ctx, c.workDir)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(c.cache, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(c.cache, fmt.Sprintf("%s-%d-v%d-%s.sqlite", kind, n, version, h))
	if _, err := os.Stat(path); err == nil {
		c.logf("%s: cached %s", kind, path)
		return path, nil
	}
	start := time.Now()
	tmp := path + ".tmp"
	removeDB(tmp)
	if err := build(tmp); err != nil {
		removeDB(tmp)
		return "", err
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", err
	}
	c.logf("%s: generated %d in %s: %s", kind, n, time.Since(start).Round(time.Millisecond), path)
	if old, err := filepath.Glob(filepath.Join(c.cache, fmt.Sprintf("%s-%d-*.sqlite", kind, n))); err == nil {
		for _, o := range old {
			if o != path {
				removeDB(o)
			}
		}
	}
	return path, nil
}

// servedCopy is a copy of a cached database, opened by sqlitestore and
// served by httpapi on loopback.
type servedCopy struct {
	// path is the copy's file; base the server's address, http://host:port.
	path, base string
	close      func()
}

// serveCopy copies the cached database to name in the work directory and
// serves it; close stops the server and removes the copy.
func serveCopy(ctx context.Context, c *config, cached, name string) (*servedCopy, error) {
	path := filepath.Join(c.workDir, name)
	if err := copyDB(cached, path); err != nil {
		return nil, err
	}
	st, err := sqlitestore.Open(ctx, path, nil)
	if err != nil {
		removeDB(path)
		return nil, err
	}
	svc, err := messaging.New(st, noopProvider{}, nil)
	if err != nil {
		st.Close()
		removeDB(path)
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		st.Close()
		removeDB(path)
		return nil, err
	}
	srv := &http.Server{Handler: httpapi.New(svc, &httpapi.Options{DisableRateLimits: true})}
	go func() { _ = srv.Serve(ln) }()
	return &servedCopy{path: path, base: "http://" + ln.Addr().String(), close: func() {
		srv.Close()
		st.Close()
		removeDB(path)
	}}, nil
}

func buildContactsDB(ctx context.Context, c *config, path string, n int) error {
	start := time.Now()
	// The schema, the workspaces and the API key come from the product; a
	// second workspace holds a few contacts made through the product.
	st, err := sqlitestore.Open(ctx, path, nil)
	if err != nil {
		return err
	}
	svc, err := messaging.New(st, noopProvider{}, nil)
	if err != nil {
		_ = st.Close()
		return err
	}
	if err := ensureWorkspace(ctx, svc); err != nil {
		_ = st.Close()
		return err
	}
	if _, err := svc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: "other", Channels: svc.Channels()}); err != nil {
		_ = st.Close()
		return err
	}
	for i := range 100 {
		if _, err := svc.Workspace("other").Contacts.Create(ctx, &messaging.ContactCreateParams{FirstName: "Amina", LastName: fmt.Sprint("Other", i),
			Phone: phone(i), Email: fmt.Sprintf("amina%d@other.example", i)}); err != nil {
			_ = st.Close()
			return err
		}
	}
	if err := st.Close(); err != nil {
		return err
	}

	// Bulk load: without the contact indexes, in one transaction, then
	// the indexes are built again from the schema's own statements.
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL&_synchronous=OFF&_foreign_keys=1&_cache_size=-1000000")
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	// contacts_created stays: the trigger numbering contacts uses it.
	rows, err := db.QueryContext(ctx, `SELECT name, sql FROM sqlite_master
		WHERE type = 'index' AND tbl_name = 'contacts' AND sql IS NOT NULL AND name <> 'contacts_created'`)
	if err != nil {
		return err
	}
	var names, ddl []string
	for rows.Next() {
		var name, q string
		if err := rows.Scan(&name, &q); err != nil {
			_ = rows.Close()
			return err
		}
		names, ddl = append(names, name), append(ddl, q)
	}
	if err := rows.Close(); err != nil {
		return err
	}
	for _, name := range names {
		if _, err := db.ExecContext(ctx, `DROP INDEX `+name); err != nil {
			return err
		}
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	// Many rows per statement: the per-statement cost of database/sql
	// and cgo is then paid once per batch.
	const batch = 50
	insertSQL := func(rows int) string {
		return `INSERT INTO contacts (id, workspace_id, first_name, last_name, full_name, phone, email, email_key,
		company, job_title, website, notes, source, tags, lifecycle, version, created_at, updated_at,
		last_fold, full_fold, phone_digits) VALUES ` +
			strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?, ?, ?, ?, ?, '', '', '', 'api', ?, ?, 1, ?, ?, ?, ?, ?), ", rows), ", ")
	}
	ins, err := tx.PrepareContext(ctx, insertSQL(batch))
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const layout = "2006-01-02T15:04:05.000000000Z"
	args := make([]any, 0, batch*16)
	flush := func(st *sql.Stmt) error {
		_, err := st.ExecContext(ctx, args...)
		args = args[:0]
		return err
	}
	for i := range n {
		g := generate(rng, i)
		full := strings.TrimSpace(g.first + " " + g.last)
		ts := g.created.Format(layout)
		args = append(args, g.id, benchWorkspace, g.first, g.last, full, g.phone, g.email, strings.ToLower(g.email),
			g.company, g.tags, g.lifecycle, ts, ts,
			driver.SearchFold(g.last), driver.SearchFold(full), driver.PhoneDigits(g.phone))
		if len(args) == cap(args) {
			if err := flush(ins); err != nil {
				return fmt.Errorf("contacts before %d: %w", i, err)
			}
		}
	}
	if err := ins.Close(); err != nil {
		return err
	}
	if rest := len(args) / 16; rest > 0 {
		st, err := tx.PrepareContext(ctx, insertSQL(rest))
		if err != nil {
			return err
		}
		err = flush(st)
		_ = st.Close()
		if err != nil {
			return err
		}
	}
	c.logf("contacts: inserted %d rows at %s", n, time.Since(start).Round(time.Millisecond))
	for _, q := range ddl {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	c.logf("contacts: indexed at %s", time.Since(start).Round(time.Millisecond))
	if _, err := db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		return err
	}
	if err := db.Close(); err != nil {
		return err
	}
	// Open and close once with the product, as a server that stopped would
	// have left it.
	st, err = sqlitestore.Open(ctx, path, nil)
	if err != nil {
		return err
	}
	return st.Close()
}
