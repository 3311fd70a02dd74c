package providertest

import (
	"context"
	"errors"
	"io"
	"runtime"
	"testing"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/record"
)

// UploaderOptions tune RunMediaUploader.
type UploaderOptions struct {
	// Size is the length of the large upload. Default 64 MiB.
	Size int64
	// MaxAlloc, when positive, bounds the bytes the process allocates
	// during the large upload (runtime.MemStats.TotalAlloc): a provider
	// that holds the body allocates at least Size. Set it for providers
	// whose every byte stays in the test process only where nothing else
	// allocates the body (not with a mock server that reads it whole),
	// and call RunMediaUploader from a test that is not parallel.
	MaxAlloc int64
}

// RunMediaUploader proves the messaging.MediaUploader capability of the
// provider newProvider returns, with the sender it returns alongside:
//
//   - an upload of opts.Size bytes (a JPEG image, given as a reader that
//     makes its bytes as they are read) is read to its end and answered
//     with a media id; with opts.MaxAlloc, while allocating less than it;
//   - a second upload gets another id;
//   - an upload whose body fails after some bytes returns an error that
//     matches the body's error (errors.Is) and no receipt;
//   - an upload with a cancelled context returns an error and no receipt.
func RunMediaUploader(t *testing.T, newProvider func(t *testing.T) (messaging.Provider, *messaging.ChannelSender), opts UploaderOptions) {
	t.Helper()
	p, s := newProvider(t)
	up, ok := p.(messaging.MediaUploader)
	if !ok {
		t.Fatalf("providertest: %T does not implement messaging.MediaUploader", p)
	}
	size := opts.Size
	if size <= 0 {
		size = 64 << 20
	}
	ctx := t.Context()

	body := &JPEGReader{Left: size}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r, err := up.UploadMedia(ctx, s, &messaging.MediaUpload{Kind: record.MediaImage, MimeType: "image/jpeg", Filename: "big.jpg", Size: size, Body: body})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatalf("UploadMedia(%d bytes): %v", size, err)
	}
	if r == nil || r.ProviderMediaID == "" {
		t.Fatalf("UploadMedia = %+v, want a media id", r)
	}
	if body.N != size {
		t.Errorf("UploadMedia read %d of the %d bytes", body.N, size)
	}
	if alloc := int64(after.TotalAlloc - before.TotalAlloc); opts.MaxAlloc > 0 && alloc > opts.MaxAlloc {
		t.Errorf("UploadMedia of %d bytes allocated %d bytes, want at most %d: it must stream the body, not hold it", size, alloc, opts.MaxAlloc)
	}

	r2, err := up.UploadMedia(ctx, s, &messaging.MediaUpload{Kind: record.MediaImage, MimeType: "image/jpeg", Size: 4096, Body: &JPEGReader{Left: 4096}})
	if err != nil {
		t.Fatalf("second UploadMedia: %v", err)
	}
	if r2 == nil || r2.ProviderMediaID == "" || r2.ProviderMediaID == r.ProviderMediaID {
		t.Errorf("second UploadMedia = %+v, want a media id other than %q", r2, r.ProviderMediaID)
	}

	cut := errors.New("providertest: the upload was cut off")
	failing := &JPEGReader{Left: 1 << 20, FailAfter: 100 << 10, Err: cut}
	r3, err := up.UploadMedia(ctx, s, &messaging.MediaUpload{Kind: record.MediaImage, MimeType: "image/jpeg", Size: 1 << 20, Body: failing})
	if !errors.Is(err, cut) {
		t.Errorf("UploadMedia of a body that fails = %v, want an error matching the body's (%v)", err, cut)
	}
	if r3 != nil {
		t.Errorf("UploadMedia of a body that fails returned %+v alongside its error", r3)
	}

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	r4, err := up.UploadMedia(cctx, s, &messaging.MediaUpload{Kind: record.MediaImage, MimeType: "image/jpeg", Size: 4096, Body: &JPEGReader{Left: 4096}})
	if err == nil || r4 != nil {
		t.Errorf("UploadMedia with a cancelled context = %+v, %v; want an error and no receipt", r4, err)
	}
}

// JPEGReader makes Left bytes as they are read: a JPEG start of image
// marker, then filler. With Err set, a read past FailAfter bytes returns
// Err. N counts the bytes read.
type JPEGReader struct {
	Left      int64
	FailAfter int64
	Err       error
	N         int64
}

// Read implements io.Reader.
func (j *JPEGReader) Read(b []byte) (int, error) {
	if j.Err != nil && j.N >= j.FailAfter {
		return 0, j.Err
	}
	if j.Left <= 0 {
		return 0, io.EOF
	}
	n := int64(len(b))
	if n > j.Left {
		n = j.Left
	}
	if j.Err != nil && j.N+n > j.FailAfter {
		n = j.FailAfter - j.N
	}
	for i := range b[:n] {
		b[i] = byte(j.N + int64(i))
	}
	if j.N == 0 && n >= 3 {
		copy(b, []byte{0xff, 0xd8, 0xff})
	}
	j.N += n
	j.Left -= n
	return int(n), nil
}

// RunReadMarker proves the messaging.ReadMarker capability of the
// provider newProvider returns, with the sender and the inbound message
// (one the provider knows: received through it, or answered by its mock
// server) it returns alongside: the message is marked read, again (not an
// error), and again with a typing indicator; a cancelled context returns
// an error.
func RunReadMarker(t *testing.T, newProvider func(t *testing.T) (messaging.Provider, *messaging.ChannelSender, *messaging.Message)) {
	t.Helper()
	p, s, m := newProvider(t)
	rm, ok := p.(messaging.ReadMarker)
	if !ok {
		t.Fatalf("providertest: %T does not implement messaging.ReadMarker", p)
	}
	ctx := t.Context()
	for i, typing := range []bool{false, false, true} {
		if err := rm.MarkRead(ctx, s, m.Clone(), typing); err != nil {
			t.Errorf("MarkRead #%d (typing %v) of %q: %v", i+1, typing, m.ProviderMessageID, err)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := rm.MarkRead(cctx, s, m.Clone(), false); err == nil {
		t.Error("MarkRead with a cancelled context succeeded")
	}
}
