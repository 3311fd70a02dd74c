package sms_test

import (
	"bytes"
	"testing"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/sms/fakegateway"
	"github.com/ujumbe/messaging/store/memstore"
)

// embedding is a wrapper that embeds a store: its methods, SMSOutbox
// among them, are the store's. The slice makes its values ones that ==
// cannot compare.
type embedding struct {
	*memstore.Store
	tags []string
}

// hiding is a wrapper that holds a store behind an interface: it is no
// OutboxStore.
type hiding struct{ sms.Store }

// hidingMessaging is a messaging store wrapper that holds the store
// behind an interface.
type hidingMessaging struct{ driver.Store }

// noStoreOutbox is an Outbox that does not name its store.
type noStoreOutbox struct{ sms.Outbox }

// TestPushesInTx: a report's push is queued in the report's transaction
// exactly when the SMS store and the store of the callbacks' Outbox keep
// the same outbox: the very store, or a wrapper embedding the Service's
// store, but not another store of the type, a Service on a wrapper that ==
// cannot compare, a wrapper hiding the store behind an interface on either
// side, or an Outbox that names no store.
func TestPushesInTx(t *testing.T) {
	t.Parallel()
	m := memstore.New()
	service := func(st driver.Store) *messaging.Service {
		svc, err := messaging.New(st, fakeprovider.New(), &messaging.Options{SecretKey: bytes.Repeat([]byte{3}, 32)})
		if err != nil {
			t.Fatal(err)
		}
		return svc
	}
	onM := service(m)
	for _, c := range []struct {
		name   string
		store  sms.Store
		svc    *messaging.Service
		outbox sms.Outbox
		want   bool
	}{
		{"the Service's store", m, onM, nil, true},
		{"another store of the type", memstore.New(), onM, nil, false},
		{"a wrapper embedding the Service's store", embedding{Store: m}, onM, nil, true},
		// The Service runs on a value == cannot compare: it cannot tell that
		// value is the SMS store, so the push follows the report.
		{"both on wrappers == cannot compare", embedding{Store: m, tags: []string{"a"}}, service(embedding{Store: m, tags: []string{"b"}}), nil, false},
		{"a wrapper hiding the Service's store", hiding{m}, onM, nil, false},
		{"the Service on a wrapper hiding the store", m, service(hidingMessaging{m}), nil, false},
		{"an Outbox naming no store", m, onM, noStoreOutbox{onM}, false},
		{"the Service given as the Outbox", m, onM, onM, true},
	} {
		s, err := sms.New(c.store, fakegateway.New(nil), &sms.Options{Callbacks: &sms.CallbackOptions{Service: c.svc, Outbox: c.outbox, WorkspaceID: "cb"}})
		if err != nil {
			t.Fatal(err)
		}
		if got := sms.PushesInTx(s); got != c.want {
			t.Errorf("%s: pushes in the report's transaction: %v, want %v", c.name, got, c.want)
		}
	}
}
