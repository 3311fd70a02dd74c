package metaprovider_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/metaprovider"
	"github.com/ujumbe/messaging/provider/metaprovider/metatest"
)

// TestThrottled checks which refusals are a throttle of the sender (the
// dispatcher pauses the sender) and which concern the message alone.
func TestThrottled(t *testing.T) {
	t.Parallel()
	type want struct {
		Code                             string
		Retryable, Throttled, Credential bool
		RetryAfter                       time.Duration
	}
	for _, c := range []struct {
		name       string
		status     int
		body       string
		retryAfter string
		want       want
	}{
		{"429 without a Graph body", 429, "", "7", want{Code: "429", Retryable: true, Throttled: true, RetryAfter: 7 * time.Second}},
		{"130429 throughput reached", 400, graphError(130429, "Rate limit hit", "Cloud API message throughput has been reached.", 0), "30",
			want{Code: "130429", Retryable: true, Throttled: true, RetryAfter: 30 * time.Second}},
		{"80007 account rate limit", 400, graphError(80007, "Rate limit issues", "", 0), "", want{Code: "80007", Retryable: true, Throttled: true}},
		{"4 app request limit", 400, graphError(4, "Application request limit reached", "", 0), "", want{Code: "4", Retryable: true, Throttled: true}},
		{"613 calls over the rate limit", 400, graphError(613, "Calls to this api have exceeded the rate limit.", "", 0), "",
			want{Code: "613", Retryable: true, Throttled: true}},
		{"131056 pair rate limit is the recipient's", 400, graphError(131056, "(Business Account, Consumer Account) pair rate limit hit", "", 0), "",
			want{Code: "131056", Retryable: true}},
		{"131056 on a 429 is still the recipient's", 429, graphError(131056, "(Business Account, Consumer Account) pair rate limit hit", "", 0), "",
			want{Code: "131056", Retryable: true}},
		{"another code on a 429", 429, graphError(131000, "Something went wrong", "", 0), "", want{Code: "131000", Retryable: true, Throttled: true}},
		{"190 on a 429 is the token", 429, graphError(190, "Error validating access token", "", 463), "", want{Code: "190", Credential: true}},
		{"131000 on 500 is not a throttle", 500, graphError(131000, "Something went wrong", "", 0), "", want{Code: "131000", Retryable: true}},
		{"503 is not a throttle", 503, "", "", want{Code: "503", Retryable: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if c.retryAfter != "" {
					w.Header().Set("Retry-After", c.retryAfter)
				}
				w.WriteHeader(c.status)
				_, _ = io.WriteString(w, c.body)
			}))
			defer srv.Close()
			m := msg("whatsapp", "+254712345678", "text")
			m.Text = "hi"
			_, err := newProvider(t, srv).Send(t.Context(), sender(m), m)
			var se *messaging.SendError
			if !errors.As(err, &se) {
				t.Fatalf("err = %v, want a SendError", err)
			}
			got := want{Code: se.Code, Retryable: se.Retryable, Throttled: se.Throttled, Credential: se.Credentials, RetryAfter: se.RetryAfter}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("SendError (-want +got):\n%s", diff)
			}
			if se.Unknown {
				t.Errorf("an answer read is an unknown outcome: %+v", se)
			}
		})
	}
	for _, code := range []int{4, 17, 32, 613, 80007, 130429} {
		if !metaprovider.ThrottlingCode(code) || !metaprovider.RetryableCode(code) {
			t.Errorf("code %d: ThrottlingCode %v, RetryableCode %v; want both", code, metaprovider.ThrottlingCode(code), metaprovider.RetryableCode(code))
		}
	}
	for _, code := range []int{131056, 131000, 190, 100, 131026} {
		if metaprovider.ThrottlingCode(code) {
			t.Errorf("ThrottlingCode(%d) = true", code)
		}
	}
}

// unknownSetup returns a provider sending to a metatest Server that
// accepts every send and never answers.
func unknownSetup(t *testing.T, client *http.Client) (*metatest.Server, messaging.Provider) {
	t.Helper()
	graph := metatest.New()
	t.Cleanup(graph.Close)
	graph.SetSendDelay(metatest.NoAnswer)
	if client == nil {
		client = graph.Client()
	}
	p, err := metaprovider.New(&metaprovider.Options{BaseURL: graph.URL(), HTTPClient: client})
	if err != nil {
		t.Fatal(err)
	}
	return graph, p
}

// unknownError checks that err is a retryable SendError with Unknown set.
func unknownError(t *testing.T, err error) {
	t.Helper()
	var se *messaging.SendError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v (%T), want a SendError", err, err)
	}
	if !se.Unknown || !se.Retryable || se.Code != metaprovider.CodeOutcomeUnknown || se.Throttled {
		t.Errorf("SendError = %+v, want a retryable %s with Unknown", se, metaprovider.CodeOutcomeUnknown)
	}
	if strings.Contains(err.Error(), token) {
		t.Errorf("the error shows the token: %v", err)
	}
}

// TestUnknownOutcome: a send that Meta accepted and did not answer in
// time is an unknown outcome, whether the context's deadline or the HTTP
// client's timeout ended it; the send was accepted, with its correlation.
func TestUnknownOutcome(t *testing.T) {
	t.Parallel()
	t.Run("context deadline", func(t *testing.T) {
		t.Parallel()
		graph, p := unknownSetup(t, nil)
		ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
		defer cancel()
		m := msg("whatsapp", "+254712345678", "text")
		m.Text = "hi"
		_, err := p.Send(ctx, sender(m), m)
		unknownError(t, err)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want it to match context.DeadlineExceeded", err)
		}
		want := []metatest.Send{{WhatsApp: true, AccountID: "106540352242922", To: "+254712345678", ProviderMessageID: "wamid.mock.1", Correlation: "msg_1"}}
		if diff := cmp.Diff(want, graph.Sends()); diff != "" {
			t.Errorf("sends (-want +got):\n%s", diff)
		}
	})
	t.Run("client timeout", func(t *testing.T) {
		t.Parallel()
		_, p := unknownSetup(t, &http.Client{Timeout: 200 * time.Millisecond})
		m := msg("messenger", "6543210987654321", "text")
		m.Text = "hi"
		_, err := p.Send(t.Context(), sender(m), m)
		unknownError(t, err)
	})
	t.Run("a 2xx answer cut short", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body := waAccepted("+254712345678", "wamid.CUT")
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			_, _ = io.WriteString(w, body[:len(body)/2]) // the server closes the connection
		}))
		defer srv.Close()
		m := msg("whatsapp", "+254712345678", "text")
		m.Text = "hi"
		_, err := newProvider(t, srv).Send(t.Context(), sender(m), m)
		unknownError(t, err)
	})
}

// TestRefusedConnectionIsNotUnknown: when nothing listens, nothing
// reached Meta: the failure is a plain retryable network error.
func TestRefusedConnectionIsNotUnknown(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	for _, deadline := range []bool{false, true} {
		p, err := metaprovider.New(&metaprovider.Options{BaseURL: url})
		if err != nil {
			t.Fatal(err)
		}
		ctx := t.Context()
		if deadline {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, time.Minute)
			defer cancel()
		}
		m := msg("whatsapp", "+254712345678", "text")
		m.Text = "hi"
		_, err = p.Send(ctx, sender(m), m)
		var se *messaging.SendError
		if !errors.As(err, &se) || se.Unknown || !se.Retryable || se.Code != metaprovider.CodeNetwork {
			t.Errorf("deadline %v: err = %v (%+v), want a retryable %s SendError without Unknown", deadline, err, se, metaprovider.CodeNetwork)
		}
	}
}
