package metaprovider_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/metaprovider"
)

// TestFetchMediaGuardsTheToken: the token goes only to the Graph API's
// host or Meta's media hosts: a lookup answering another host's URL is
// refused without a request there, and a file_size over the limit is
// ErrMediaTooLarge before any download.
func TestFetchMediaGuardsTheToken(t *testing.T) {
	t.Parallel()
	var elsewhere atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { elsewhere.Add(1) }))
	defer other.Close()
	var downloads atomic.Int64
	graph := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasSuffix(r.URL.Path, "/foreign"):
			_, _ = w.Write([]byte(`{"url":"` + other.URL + `/steal","mime_type":"image/jpeg","file_size":3,"id":"foreign"}`))
		case strings.HasSuffix(r.URL.Path, "/huge"):
			_, _ = w.Write([]byte(`{"url":"http://` + r.Host + `/v21.0/dl/huge","mime_type":"video/mp4","file_size":1000,"id":"huge"}`))
		default:
			downloads.Add(1)
		}
	}))
	defer graph.Close()
	p, err := metaprovider.New(&metaprovider.Options{BaseURL: graph.URL})
	if err != nil {
		t.Fatal(err)
	}
	snd := &messaging.ChannelSender{Channel: "whatsapp", AccountID: "1", AccessToken: "secret-token"}
	if _, err := p.FetchMedia(t.Context(), snd, "foreign", 100); err == nil || elsewhere.Load() != 0 {
		t.Errorf("foreign URL: err %v, %d requests there; want an error and none", err, elsewhere.Load())
	}
	if _, err := p.FetchMedia(t.Context(), snd, "huge", 100); !errors.Is(err, messaging.ErrMediaTooLarge) || downloads.Load() != 0 {
		t.Errorf("huge media: err %v, %d downloads; want ErrMediaTooLarge before any", err, downloads.Load())
	}
	if _, err := p.FetchMedia(t.Context(), nil, "x", 100); err == nil {
		t.Error("no sender: no error")
	}
}
