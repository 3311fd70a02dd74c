package httpapi

import (
	"errors"
	"io"
	"net/http"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/internal/mediadownload"
)

// getMessageMedia streams the media of an inbound message from the
// provider, fetched with the workspace's stored credentials, which the
// caller never sees. Media over the service's limit is 413
// payload_too_large; a body that grows past it while streaming is cut
// off (the connection is aborted, so the client sees a truncated body).
func (h *Handler) getMessageMedia(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	if err := noQuery(r); err != nil {
		return err
	}
	media, err := h.svc.Workspace(p.WorkspaceID).Messages.Media(r.Context(), r.PathValue("id"))
	if errors.Is(err, messaging.ErrMediaTooLarge) {
		var me *messaging.Error
		msg := "the media is larger than the service's limit"
		if errors.As(err, &me) {
			msg = me.Message
		}
		return &apiError{code: CodePayloadTooLarge, status: http.StatusRequestEntityTooLarge, message: msg}
	}
	if err != nil {
		return err
	}
	defer media.Body.Close()
	mediadownload.Header(w.Header(), media)
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return nil
	}
	if _, err := io.Copy(w, media.Body); err != nil {
		h.log.WarnContext(r.Context(), "media stream cut off", "correlation_id", correlationID(r), "path", r.URL.Path, "err", err.Error())
		panic(http.ErrAbortHandler)
	}
	return nil
}
