package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/httpapi"
)

// Figure 2: HTTP accept. The product is POST /v1/messages through httpapi
// (authentication, scope, a rate limit set high, strict decoding,
// validation, idempotency, the store) on sqlitestore. The baseline is a bare
// net/http handler that decodes the same JSON with the same strictness and
// body limit and writes the same 201 without storing anything. Both are
// driven by the same 32 keep-alive clients over loopback TCP.

const httpClients = 32

func runHTTPAccept(ctx context.Context, c *config) ([]*row, error) {
	d := pick(c, time.Second, 300*time.Millisecond)
	r := &row{figure: "2", name: "HTTP accept, POST /v1/messages, 32 keep-alive clients", unit: "req/s", higherBetter: true, goal: 0.5,
		baselineName: "bare net/http handler: same Content-Type, 1 MiB limit, UTF-8, one object, no unknown or inexact member names; same 201 body; stores nothing"}
	err := c.measure(r, "http", func(dir string, product bool) (float64, error) {
		if product {
			return httpProduct(ctx, dir, d)
		}
		return serveAndLoad(ctx, http.HandlerFunc(bareAccept), d)
	})
	if err != nil {
		return nil, err
	}
	return []*row{r}, nil
}

func httpProduct(ctx context.Context, dir string, d time.Duration) (float64, error) {
	st, svc, err := newStoreService(ctx, dir, noopProvider{}, nil)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	h := httpapi.New(svc, &httpapi.Options{RateLimits: map[string]int{"POST /v1/messages": 1 << 30}})
	return serveAndLoad(ctx, h, d)
}

// serveAndLoad serves h on a loopback port and measures the requests per
// second that httpClients keep-alive clients get through it.
func serveAndLoad(ctx context.Context, h http.Handler, d time.Duration) (float64, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	client := newClient(httpClients)
	defer client.CloseIdleConnections()
	url := "http://" + ln.Addr().String() + "/v1/messages"
	post := func(ctx context.Context, w, i int) error {
		body := fmt.Sprintf(`{"channel":"whatsapp","to":"%s","type":"text","text":"Your order A-1042 has shipped.","idempotency_key":"order-%d-%d"}`,
			phone(w*1_000_000+i), w, i)
		status, _, err := do(ctx, client, "POST", url, body)
		if err != nil {
			return err
		}
		if status != http.StatusCreated {
			return fmt.Errorf("POST /v1/messages: status %d", status)
		}
		return nil
	}
	if _, err := loop(ctx, httpClients, d/10, func(ctx context.Context, w, i int) error { return post(ctx, w+100, i) }); err != nil {
		return 0, err
	}
	return loop(ctx, httpClients, d, post)
}

// newClient returns an HTTP client keeping up to n connections alive.
func newClient(n int) *http.Client {
	return &http.Client{Timeout: time.Minute, Transport: &http.Transport{
		MaxIdleConns: n, MaxIdleConnsPerHost: n, MaxConnsPerHost: n, DisableCompression: true,
		IdleConnTimeout: time.Minute,
	}}
}

// do sends a request with the bench API key and returns the status and
// body.
func do(ctx context.Context, client *http.Client, method, url, body string) (int, []byte, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("X-API-Key", benchKey)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// bareAccept is the baseline handler: the strict decoding of httpapi with
// nothing behind it. It refuses what httpapi's decoding refuses (a query
// string, another Content-Type, a body over 1 MiB, invalid UTF-8, anything
// but one JSON object, unknown members, member names that differ in case,
// wrong types) in one pass over the body plus a scan of its member names,
// and answers the same 201 body.
func bareAccept(w http.ResponseWriter, r *http.Request) {
	var b [12]byte
	_, _ = rand.Read(b[:])
	w.Header().Set("X-Correlation-ID", "req_"+hex.EncodeToString(b[:]))
	fail := func(status int, msg string) {
		http.Error(w, msg, status)
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" || r.URL.RawQuery != "" {
		fail(400, "bad request")
		return
	}
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" || (params["charset"] != "" && !strings.EqualFold(params["charset"], "utf-8")) {
		fail(400, "Content-Type")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, httpapi.DefaultMaxBodyBytes))
	if err != nil {
		fail(413, "too large")
		return
	}
	if !utf8.Valid(body) {
		fail(400, "UTF-8")
		return
	}
	if t := bytes.TrimLeft(body, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		fail(400, "not an object")
		return
	}
	if err := exactMembers(body); err != nil {
		fail(400, err.Error())
		return
	}
	var p sendBody
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		fail(400, "malformed")
		return
	}
	if _, err := dec.Token(); err != io.EOF {
		fail(400, "trailing data")
		return
	}
	res := sendAnswer{MessageID: record.NewID("msg"), ConversationID: record.ConversationID(benchWorkspace, p.Channel, p.To),
		Status: messaging.StatusQueued, Channel: p.Channel, To: p.To}
	out, _ := json.Marshal(res)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(out)+1))
	w.WriteHeader(http.StatusCreated)
	_, _ = w.Write(append(out, '\n'))
}

// sendBody is a POST /v1/messages body as the baseline decodes it.
type sendBody struct {
	Channel        string `json:"channel"`
	To             string `json:"to"`
	Type           string `json:"type"`
	Text           string `json:"text"`
	MediaURL       string `json:"media_url"`
	Caption        string `json:"caption"`
	Filename       string `json:"filename"`
	IdempotencyKey string `json:"idempotency_key"`
}

// sendAnswer is the baseline's 201 body, the send response of the API.
type sendAnswer struct {
	MessageID      string `json:"message_id"`
	ConversationID string `json:"conversation_id"`
	Status         string `json:"status"`
	Channel        string `json:"channel"`
	To             string `json:"to"`
}

// sendMembers are the exact member names of a POST /v1/messages body.
var sendMembers = map[string]bool{"channel": true, "to": true, "type": true, "text": true, "media_url": true, "caption": true,
	"filename": true, "idempotency_key": true, "template_name": true, "language": true, "components": true}

// exactMembers checks the member names of the top-level object of a JSON
// body against sendMembers, case-sensitively, in one scan that does not
// decode values. Nested objects are refused (the benchmark sends none, and
// httpapi checks their names too).
func exactMembers(body []byte) error {
	depth := 0
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '{', '[':
			depth++
			if depth > 1 {
				return errors.New("nested values are not supported by the baseline")
			}
		case '}', ']':
			depth--
		case '"':
			j := i + 1
			for j < len(body) && body[j] != '"' {
				if body[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(body) {
				return errors.New("malformed")
			}
			// A string followed by ':' is a member name.
			k := j + 1
			for k < len(body) && (body[k] == ' ' || body[k] == '\t' || body[k] == '\r' || body[k] == '\n') {
				k++
			}
			if k < len(body) && body[k] == ':' {
				raw := body[i+1 : j]
				ok := sendMembers[string(raw)]
				if bytes.IndexByte(raw, '\\') >= 0 {
					var name string
					ok = json.Unmarshal(body[i:j+1], &name) == nil && sendMembers[name]
				}
				if !ok {
					return fmt.Errorf("unknown member %s", body[i:j+1])
				}
			}
			i = j
		}
	}
	return nil
}
