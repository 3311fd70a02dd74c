package fakeprovider_test

import (
	"testing"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/provider/providertest"
)

func TestTemplateManagerConformance(t *testing.T) {
	providertest.RunTemplateManager(t, func(t *testing.T) (messaging.Provider, *messaging.ChannelSender) {
		return fakeprovider.New(), nil
	})
}
