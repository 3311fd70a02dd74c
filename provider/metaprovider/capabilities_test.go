package metaprovider_test

import (
	"testing"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/providertest"
	"github.com/ujumbe/messaging/record"
)

// TestMediaUploaderConformance runs providertest's MediaUploader contract
// against metatest, which reads each upload as it streams (counting and
// hashing it): the 64 MiB upload must then stay within a few MiB of
// allocations in the whole process. Not parallel, for the allocation
// bound.
func TestMediaUploaderConformance(t *testing.T) {
	providertest.RunMediaUploader(t, func(t *testing.T) (messaging.Provider, *messaging.ChannelSender) {
		p, mock := mockProvider(t)
		t.Cleanup(func() {
			ups := mock.MediaUploads()
			if len(ups) != 2 || ups[0].Size != 64<<20 || ups[0].Type != "image/jpeg" || ups[0].AccountID != phoneID || ups[1].Size != 4096 {
				t.Errorf("the mock received %+v, want the 64 MiB and the 4096-byte uploads to %s (the failing and cancelled ones are not kept)", ups, phoneID)
			}
		})
		return p, conn()
	}, providertest.UploaderOptions{MaxAlloc: 8 << 20})
}

// TestReadMarkerConformance runs providertest's ReadMarker contract
// against metatest, with an inbound WhatsApp message.
func TestReadMarkerConformance(t *testing.T) {
	t.Parallel()
	providertest.RunReadMarker(t, func(t *testing.T) (messaging.Provider, *messaging.ChannelSender, *messaging.Message) {
		p, mock := mockProvider(t)
		t.Cleanup(func() {
			if n := len(mock.ReadMarks()); n != 3 {
				t.Errorf("the mock received %d read marks, want 3 (the cancelled one never leaves)", n)
			}
		})
		return p, conn(), &messaging.Message{ID: "msg_in", WorkspaceID: "ws_1", Channel: messaging.ChannelWhatsApp, To: "+254712345678",
			Direction: record.DirectionInbound, Type: record.TypeText, Text: "Habari", ProviderMessageID: "wamid.HBgLMjU0NzEyMzQ1Njc4FQIAEhgUM0VCMEQ4"}
	})
}
