package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key
// (mode 0600) to dir and returns their paths and a pool trusting it.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), NotAfter: time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	writeMode(t, certFile, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), 0o644)
	writeMode(t, keyFile, string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder})), 0o600)
	return certFile, keyFile, pool
}

// runServer runs the server in this process with args on a free loopback
// port and waits until base+"/healthz" answers through client; it stops
// the server at the end of the test. It returns the address.
func runServer(t *testing.T, scheme string, client *http.Client, args ...string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, append([]string{"-addr", addr}, args...)) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := client.Get(scheme + "://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			return addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server did not answer over %s in 60 s: %v", scheme, err)
		}
		select {
		case err := <-done:
			done <- err
			t.Fatalf("the server stopped: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// signInCookie signs in to the dashboard at base with secret and returns
// the session cookie.
func signInCookie(t *testing.T, client *http.Client, base, secret string) *http.Cookie {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/dashboard/sign-in", strings.NewReader(url.Values{"secret": {secret}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	res, err := client.Transport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	for _, c := range res.Cookies() {
		if c.Name == "dashboard_session" {
			return c
		}
	}
	t.Fatalf("sign-in: %d, no session cookie", res.StatusCode)
	return nil
}

// operatorToken reads the token of the server started on db.
func operatorToken(t *testing.T, db string) string {
	t.Helper()
	b, err := os.ReadFile(db + ".admin-token")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// TestServerTLS: with -tls-cert and -tls-key the server serves HTTPS
// (TLS 1.2 at least; a client offering only TLS 1.1 is refused), and the
// dashboard's session cookie is Secure. A world-readable key file is
// refused, naming the fix.
func TestServerTLS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, pool := selfSigned(t, dir)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	db := filepath.Join(dir, "tls.db")
	addr := runServer(t, "https", client, "-db", db, "-tls-cert", certFile, "-tls-key", keyFile)
	resp, err := client.Get("https://" + addr + "/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.TLS == nil || resp.TLS.Version < tls.VersionTLS12 {
		t.Fatalf("GET over TLS: %d, %+v", resp.StatusCode, resp.TLS)
	}
	old := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MaxVersion: tls.VersionTLS11}}}
	if resp, err := old.Get("https://" + addr + "/healthz"); err == nil {
		resp.Body.Close()
		t.Error("a TLS 1.1 client was served")
	}
	if resp, err := http.Get("http://" + addr + "/healthz"); err == nil && resp.StatusCode == 200 {
		resp.Body.Close()
		t.Error("plain HTTP was served on the TLS listener")
	}
	if c := signInCookie(t, client, "https://"+addr, operatorToken(t, db)); !c.Secure {
		t.Errorf("session cookie over TLS: %+v; want Secure", c)
	}

	if err := os.Chmod(keyFile, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = loadTLS(certFile, keyFile)
	if err == nil || !strings.Contains(err.Error(), "-tls-key: "+keyFile+" holds a secret but its mode is 0644, readable by others: chmod 600") {
		t.Errorf("a world-readable TLS key: %v", err)
	}
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatal(err)
	}
	certAsKey := filepath.Join(dir, "cert-as-key.pem")
	writeMode(t, certAsKey, string(certPEM), 0o600)
	if _, err := loadTLS(certFile, certAsKey); err == nil || !strings.Contains(err.Error(), "not a PEM certificate and its private key") {
		t.Errorf("a certificate as its key: %v", err)
	}
}

// TestServerSecureCookieFollowsPublicURL: behind a proxy ending TLS
// (plain HTTP to the server), the session cookie is Secure when
// -public-url is https, and not without it.
func TestServerSecureCookieFollowsPublicURL(t *testing.T) {
	client := &http.Client{Transport: &http.Transport{}}
	for _, tc := range []struct {
		public string
		secure bool
	}{{"", false}, {"http://messaging.example.com", false}, {"https://messaging.example.com/", true}} {
		db := filepath.Join(t.TempDir(), "x.db")
		args := []string{"-db", db}
		if tc.public != "" {
			args = append(args, "-public-url", tc.public)
		}
		addr := runServer(t, "http", client, args...)
		if c := signInCookie(t, client, "http://"+addr, operatorToken(t, db)); c.Secure != tc.secure {
			t.Errorf("-public-url %q: session cookie Secure %v, want %v", tc.public, c.Secure, tc.secure)
		}
	}
}

// TestPublicBase: the URL printed and the Secure rule come from
// -public-url, else the scheme the server serves and -addr.
func TestPublicBase(t *testing.T) {
	for _, tc := range []struct {
		public string
		tls    bool
		want   string
	}{
		{"", false, "http://127.0.0.1:8080"},
		{"", true, "https://127.0.0.1:8080"},
		{"https://m.example.com/", false, "https://m.example.com"},
		{"https://m.example.com/api", true, "https://m.example.com/api"},
		{"http://m.example.com", true, "error: must be https://"},
		{"m.example.com", false, "error: must be an absolute"},
		{"https://user:pw@m.example.com", false, "error: without credentials"},
		{"https://m.example.com/?a=1", false, "error: without credentials, query"},
	} {
		got, err := publicBase(tc.public, "127.0.0.1:8080", tc.tls)
		if err != nil {
			got = "error: " + err.Error()
		}
		if !strings.HasPrefix(got, tc.want) && !(strings.HasPrefix(tc.want, "error: ") && strings.Contains(got, strings.TrimPrefix(tc.want, "error: "))) {
			t.Errorf("publicBase(%q, tls %v) = %q; want %q", tc.public, tc.tls, got, tc.want)
		}
	}
}

// TestWebhooksLoopbackOffByDefault: started without -webhooks-loopback,
// the server refuses a webhook endpoint on a loopback address (so no
// workspace can reach the host's loopback services through it, nor
// through its test deliveries); with the flag it takes it.
func TestWebhooksLoopbackOffByDefault(t *testing.T) {
	const key = "acme_live_0123456789abcdef0123456789abcdef"
	boot := filepath.Join(t.TempDir(), "bootstrap.json")
	writeMode(t, boot, `{"workspaces": [{"id": "acme", "name": "Acme", "channels": ["whatsapp"],
	  "api_keys": [{"key": "`+key+`", "scopes": ["manage:webhooks"]}]}]}`, 0o600)
	client := &http.Client{Transport: &http.Transport{}}
	for _, tc := range []struct {
		flags []string
		want  int
	}{{nil, 400}, {[]string{"-webhooks-loopback"}, 201}} {
		addr := runServer(t, "http", client, append([]string{"-db", filepath.Join(t.TempDir(), "x.db"), "-bootstrap", boot}, tc.flags...)...)
		req, _ := http.NewRequest("POST", "http://"+addr+"/v1/webhooks", strings.NewReader(`{"url": "http://127.0.0.1:9/hook", "events": ["message.status_updated"]}`))
		req.Header.Set("X-API-Key", key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Error struct{ Code, Field string } `json:"error"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != tc.want || (tc.want == 400 && (body.Error.Code != "validation_error" || body.Error.Field != "url")) {
			t.Errorf("flags %q: %d %+v; want %d", tc.flags, resp.StatusCode, body.Error, tc.want)
		}
	}
}
