package memstore_test

import (
	"testing"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/store/memstore"
	"github.com/ujumbe/messaging/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) driver.Store { return memstore.New() })
}

func TestSMSConformance(t *testing.T) {
	storetest.RunSMS(t, func(t *testing.T) sms.Store { return memstore.New() })
}
