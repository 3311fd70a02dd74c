// Package memstore is an in-memory driver.Store. It is a real,
// concurrency-safe implementation that passes store/storetest, meant for
// tests, examples and embedding where persistence is not needed. Every value
// it returns is a copy: callers can modify them freely.
package memstore

import (
	"context"
	"iter"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/sms"
)

var (
	_ driver.Store = (*Store)(nil)
	_ sms.Store    = (*Store)(nil)
)

// Store is an in-memory driver.Store. The zero value is not usable; call
// New.
type Store struct {
	mu         sync.RWMutex
	workspaces map[string]*messaging.WorkspaceInfo
	keys       map[string]*messaging.APIKey // by id
	contacts   map[string]*messaging.Contact
	// contactList holds the contacts of each workspace, in insertion order.
	contactList map[string][]*messaging.Contact
	templates   map[string]*messaging.Template
	messages    map[string]*messaging.Message
	// wsMessages holds each workspace's messages in creation order, for
	// MessageList and MessageHourlyCounts.
	wsMessages map[string][]*messaging.Message
	idem       map[[2]string]*messaging.Message // (workspace, idempotency key)
	// queued holds the queued messages by id, for claims.
	queued       map[string]*messaging.Message
	byProviderID map[string]*messaging.Message
	endpoints    []*messaging.WebhookEndpoint
	// deliveries holds the webhook deliveries in Seq order: the pending
	// ones and the newest finished ones of each endpoint (WebhookRecord
	// prunes the rest).
	deliveries []*messaging.WebhookDelivery
	seq        int64
	// pending holds the kept provider reports (pending.go).
	pending pendingReports
	// sms holds the SMS accounts and messages (sms.go), under its own lock.
	sms smsData
	// connections holds the channel connections (connections.go).
	connections map[connKey]*messaging.ChannelConnection
	// leases holds the named leases by name.
	leases map[string]lease
	// audit holds the audit events in Seq order (audit.go).
	audit    []*messaging.AuditEvent
	auditSeq int64
	// sessions holds the dashboard sessions by hash (sessions.go).
	sessions   map[string]*driver.StoredSession
	sessionIDs map[string]bool
	// suppressions holds the opt-out states (suppressions.go).
	suppressions map[suppressionKey]*messaging.Suppression
	// media holds the uploaded media records by id (media.go).
	media map[string]*record.UploadedMedia
	// fallbacks holds the SMS fallbacks by message id, smsLinks the SMS
	// accounts linked to each workspace, sorted (fallback.go).
	fallbacks map[string]*fallbackEntry
	smsLinks  map[string][]string
}

// New returns an empty store.
func New() *Store {
	return &Store{
		workspaces:   map[string]*messaging.WorkspaceInfo{},
		keys:         map[string]*messaging.APIKey{},
		contacts:     map[string]*messaging.Contact{},
		contactList:  map[string][]*messaging.Contact{},
		templates:    map[string]*messaging.Template{},
		messages:     map[string]*messaging.Message{},
		wsMessages:   map[string][]*messaging.Message{},
		idem:         map[[2]string]*messaging.Message{},
		queued:       map[string]*messaging.Message{},
		byProviderID: map[string]*messaging.Message{},
		connections:  map[connKey]*messaging.ChannelConnection{},
		leases:       map[string]lease{},
		sessions:     map[string]*driver.StoredSession{},
		sessionIDs:   map[string]bool{},
		media:        map[string]*record.UploadedMedia{},
	}
}

// lock takes s.mu for writing, unless ctx is done: then it returns ctx's
// error, takes nothing, and the method does nothing. Every method checks
// its context this way (the SMS methods through smsData.do), so that a
// cancelled call never changes the store.
func (s *Store) lock(ctx context.Context) (unlock func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	return s.mu.Unlock, nil
}

// rlock is lock for a method that only reads: it takes s.mu for reading.
func (s *Store) rlock(ctx context.Context) (unlock func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	return s.mu.RUnlock, nil
}

// read runs fn under the read lock (rlock), unless ctx is done: then it
// returns ctx's error and fn does not run.
func read[T any](ctx context.Context, s *Store, fn func() (T, error)) (T, error) {
	return locked(ctx, s.rlock, fn)
}

// write is read for a method that changes the store: fn runs under the
// write lock (lock).
func write[T any](ctx context.Context, s *Store, fn func() (T, error)) (T, error) {
	return locked(ctx, s.lock, fn)
}

// update is write for a method that returns only an error.
func (s *Store) update(ctx context.Context, fn func() error) error {
	_, err := write(ctx, s, func() (struct{}, error) { return struct{}{}, fn() })
	return err
}

// locked runs fn holding what lock takes, unless it returns an error.
func locked[T any](ctx context.Context, lock func(context.Context) (func(), error), fn func() (T, error)) (T, error) {
	unlock, err := lock(ctx)
	if err != nil {
		var zero T
		return zero, err
	}
	defer unlock()
	return fn()
}

// get is a getter: under the read lock, a copy (by clone) of the record
// find finds, or messaging.ErrNotFound when it finds none.
func get[T any](ctx context.Context, s *Store, find func() (T, bool), clone func(T) T) (T, error) {
	return read(ctx, s, func() (T, error) {
		v, ok := find()
		if !ok {
			var zero T
			return zero, messaging.ErrNotFound
		}
		return clone(v), nil
	})
}

// entry is a find for get: all[k]. The maps of a Store are made once, by
// New, so all may be read before the lock is taken.
func entry[K comparable, V any](all map[K]V, k K) func() (V, bool) {
	return func() (V, bool) {
		v, ok := all[k]
		return v, ok
	}
}

// inWorkspace returns all[id] and whether it is there and belongs to the
// workspace ws, as workspaceOf tells.
func inWorkspace[T any](all map[string]T, ws, id string, workspaceOf func(T) string) (T, bool) {
	v, ok := all[id]
	return v, ok && workspaceOf(v) == ws
}

// checkNew returns messaging.ErrNotFound when the workspace ws does not
// exist, and messaging.ErrConflict when clash reports a stored record
// that a new one would clash with: the checks of a create. s.mu is held.
func checkNew[T any](s *Store, ws string, stored iter.Seq[T], clash func(T) bool) error {
	if _, ok := s.workspaces[ws]; !ok {
		return messaging.ErrNotFound
	}
	for o := range stored {
		if clash(o) {
			return messaging.ErrConflict
		}
	}
	return nil
}

// newestPage returns copies (by clone) of the records of all, which holds
// them oldest first, that keep accepts: the newest first, limit at most.
func newestPage[T any](all []T, limit int, keep func(T) bool, clone func(T) T) []T {
	var out []T
	for i := len(all) - 1; i >= 0 && len(out) < limit; i-- {
		if keep(all[i]) {
			out = append(out, clone(all[i]))
		}
	}
	return out
}

// insert stores v as all[k], or returns messaging.ErrConflict when all
// holds k already.
func insert[K comparable, V any](all map[K]V, k K, v V) error {
	if _, ok := all[k]; ok {
		return messaging.ErrConflict
	}
	all[k] = v
	return nil
}

// sortedUnique sorts list in place and returns it without repeats.
func sortedUnique(list []string) []string {
	slices.Sort(list)
	return slices.Compact(list)
}

// keysAfter returns the keys of all above after, in order, limit at most:
// a page of a list by id.
func keysAfter[V any](all map[string]V, after string, limit int) []string {
	var ids []string
	for id := range all {
		if id > after {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids[:min(len(ids), max(limit, 0))]
}

// shallowCopy returns a copy of *v: the clone of a record that holds no
// slice, map or pointer.
func shallowCopy[T any](v *T) *T {
	c := *v
	return &c
}

// dueStats counts the due times of a queue: how many there are, how many
// are due at now, and the oldest of those (UTC; nil when none is due).
func dueStats(dues iter.Seq[time.Time], now time.Time) (n, due int64, oldest *time.Time) {
	for at := range dues {
		n++
		if at.After(now) {
			continue
		}
		due++
		if oldest == nil || at.Before(*oldest) {
			t := at.UTC()
			oldest = &t
		}
	}
	return n, due, oldest
}

// Close does nothing; it exists to satisfy driver.Store.
func (s *Store) Close() error { return nil }

// copyWorkspace returns a deep copy of w as the store keeps and returns
// it: Channels never nil, an empty keyword list nil (the defaults).
func copyWorkspace(w *messaging.WorkspaceInfo) *messaging.WorkspaceInfo {
	c := w.Clone()
	if c.Channels == nil {
		c.Channels = []string{}
	}
	if len(c.OptOutKeywords) == 0 {
		c.OptOutKeywords = nil
	}
	if len(c.OptInKeywords) == 0 {
		c.OptInKeywords = nil
	}
	return c
}

// keywords returns a copy of a keyword list, nil when it is empty (the
// defaults).
func keywords(list []string) []string {
	if len(list) == 0 {
		return nil
	}
	return slices.Clone(list)
}

func copyTime(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	c := *t
	return &c
}

func copyContact(ct *messaging.Contact) *messaging.Contact {
	c := *ct
	c.Tags = append([]string{}, ct.Tags...)
	c.OptedOut = nil // not stored: the service derives it
	return &c
}

func copyTemplate(t *messaging.Template) *messaging.Template {
	c := *t
	c.Components = make([]messaging.TemplateComponent, len(t.Components))
	for i, comp := range t.Components {
		comp.Buttons = slices.Clone(comp.Buttons)
		comp.Examples = slices.Clone(comp.Examples)
		c.Components[i] = comp
	}
	if t.Components == nil {
		c.Components = nil
	}
	c.SendExample = nil
	return &c
}

// copiesOf returns a copy (by clone) of each record of all that keep
// accepts, nil when it accepts none.
func copiesOf[T any](all iter.Seq[T], keep func(T) bool, clone func(T) T) []T {
	var out []T
	for v := range all {
		if keep(v) {
			out = append(out, clone(v))
		}
	}
	return out
}

// WorkspaceCreate implements driver.Store.
func (s *Store) WorkspaceCreate(ctx context.Context, w *messaging.WorkspaceInfo) error {
	return s.update(ctx, func() error {
		c := copyWorkspace(w)
		c.Channels = sortedUnique(c.Channels)
		return insert(s.workspaces, w.ID, c)
	})
}

// WorkspaceGet implements driver.Store.
func (s *Store) WorkspaceGet(ctx context.Context, id string) (*messaging.WorkspaceInfo, error) {
	return get(ctx, s, entry(s.workspaces, id), copyWorkspace)
}

// WorkspaceList implements driver.Store.
func (s *Store) WorkspaceList(ctx context.Context, p *driver.WorkspaceListParams) ([]*messaging.WorkspaceInfo, error) {
	return read(ctx, s, func() ([]*messaging.WorkspaceInfo, error) {
		ids := keysAfter(s.workspaces, p.After, p.Limit)
		out := make([]*messaging.WorkspaceInfo, 0, len(ids))
		for _, id := range ids {
			out = append(out, copyWorkspace(s.workspaces[id]))
		}
		return out, nil
	})
}

// WorkspaceSetSettings implements driver.Store.
func (s *Store) WorkspaceSetSettings(ctx context.Context, p *driver.WorkspaceSettingsParams) error {
	return s.update(ctx, func() error {
		w, ok := s.workspaces[p.WorkspaceID]
		if !ok {
			return messaging.ErrNotFound
		}
		if p.Expect != nil && (!slices.Equal(w.OptOutKeywords, p.Expect.OptOut) || !slices.Equal(w.OptInKeywords, p.Expect.OptIn)) {
			return messaging.ErrConflict // the lists changed since the caller read them
		}
		if p.OutsideWindow != nil {
			w.OutsideWindow = *p.OutsideWindow
		}
		if p.UnconfirmedSends != nil {
			w.UnconfirmedSends = *p.UnconfirmedSends
		}
		if p.OptOutKeywords != nil {
			w.OptOutKeywords = keywords(*p.OptOutKeywords)
		}
		if p.OptInKeywords != nil {
			w.OptInKeywords = keywords(*p.OptInKeywords)
		}
		return nil
	})
}

// WorkspaceSetChannel implements driver.Store.
func (s *Store) WorkspaceSetChannel(ctx context.Context, p *driver.ChannelParams) error {
	return s.update(ctx, func() error {
		w, ok := s.workspaces[p.WorkspaceID]
		if !ok {
			return messaging.ErrNotFound
		}
		setChannel(w, p.Channel, p.Connected)
		if c, ok := s.connections[connKey{p.WorkspaceID, p.Channel}]; ok && !p.Connected {
			c.Status, c.UpdatedAt = record.ConnectionDisconnected, p.At
		}
		return nil
	})
}

// APIKeyCreate implements driver.Store.
func (s *Store) APIKeyCreate(ctx context.Context, k *messaging.APIKey) error {
	return s.update(ctx, func() error {
		clash := func(o *messaging.APIKey) bool { return o.ID == k.ID || slices.Equal(o.Hash, k.Hash) }
		if err := checkNew(s, k.WorkspaceID, maps.Values(s.keys), clash); err != nil {
			return err
		}
		s.keys[k.ID] = k.Clone()
		return nil
	})
}

// APIKeysByPrefix implements driver.Store.
func (s *Store) APIKeysByPrefix(ctx context.Context, prefix string) ([]*messaging.APIKey, error) {
	return read(ctx, s, func() ([]*messaging.APIKey, error) {
		return copiesOf(maps.Values(s.keys), func(k *messaging.APIKey) bool { return k.Prefix == prefix }, (*messaging.APIKey).Clone), nil
	})
}

// APIKeyList implements driver.Store.
func (s *Store) APIKeyList(ctx context.Context, workspaceID string) ([]*messaging.APIKey, error) {
	return read(ctx, s, func() ([]*messaging.APIKey, error) {
		out := copiesOf(maps.Values(s.keys), func(k *messaging.APIKey) bool { return k.WorkspaceID == workspaceID }, (*messaging.APIKey).Clone)
		sort.Slice(out, func(i, j int) bool {
			if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
				return out[i].CreatedAt.Before(out[j].CreatedAt)
			}
			return out[i].ID < out[j].ID
		})
		return out, nil
	})
}

// keyOf returns the key id of the workspace ws. s.mu is held.
func (s *Store) keyOf(ws, id string) (*messaging.APIKey, bool) {
	return inWorkspace(s.keys, ws, id, func(k *messaging.APIKey) string { return k.WorkspaceID })
}

// withKey runs fn on the key id of the workspace ws under the write lock,
// unless ctx is done; missing is the error when there is no such key.
func (s *Store) withKey(ctx context.Context, ws, id string, missing error, fn func(k *messaging.APIKey)) error {
	return s.update(ctx, func() error {
		k, ok := s.keyOf(ws, id)
		if !ok {
			return missing
		}
		fn(k)
		return nil
	})
}

// APIKeyRevoke implements driver.Store.
func (s *Store) APIKeyRevoke(ctx context.Context, p *driver.APIKeyRevokeParams) error {
	return s.withKey(ctx, p.WorkspaceID, p.ID, messaging.ErrNotFound, func(k *messaging.APIKey) {
		if k.RevokedAt == nil {
			k.RevokedAt = copyTime(&p.At)
		}
	})
}

// APIKeyUpdate implements driver.Store.
func (s *Store) APIKeyUpdate(ctx context.Context, p *driver.APIKeyUpdateParams) error {
	return s.withKey(ctx, p.WorkspaceID, p.ID, messaging.ErrNotFound, func(k *messaging.APIKey) {
		k.Scopes, k.ExpiresAt = slices.Clone(p.Scopes), copyTime(p.ExpiresAt)
	})
}

// APIKeyTouch implements driver.Store: a key that is not there is not
// an error.
func (s *Store) APIKeyTouch(ctx context.Context, p *driver.APIKeyTouchParams) error {
	return s.withKey(ctx, p.WorkspaceID, p.ID, nil, func(k *messaging.APIKey) {
		if k.LastUsedAt == nil || k.LastUsedAt.Before(p.At) {
			k.LastUsedAt = copyTime(&p.At)
		}
	})
}

// contactClash reports whether another contact of the workspace has c's
// phone or email key. Callers hold s.mu.
func (s *Store) contactClash(c *messaging.Contact) bool {
	for _, o := range s.contactList[c.WorkspaceID] {
		if o.ID == c.ID {
			continue
		}
		if (c.Phone != "" && o.Phone == c.Phone) || (c.EmailKey != "" && o.EmailKey == c.EmailKey) {
			return true
		}
	}
	return false
}

// contactOf returns the contact id of the workspace ws. s.mu is held.
func (s *Store) contactOf(ws, id string) (*messaging.Contact, bool) {
	return inWorkspace(s.contacts, ws, id, func(c *messaging.Contact) string { return c.WorkspaceID })
}

// ContactCreate implements driver.Store.
func (s *Store) ContactCreate(ctx context.Context, c *messaging.Contact) error {
	return s.update(ctx, func() error {
		if _, ok := s.workspaces[c.WorkspaceID]; !ok {
			return messaging.ErrNotFound
		}
		if _, ok := s.contacts[c.ID]; ok || s.contactClash(c) {
			return messaging.ErrConflict
		}
		cp := copyContact(c)
		s.contacts[c.ID] = cp
		s.contactList[c.WorkspaceID] = append(s.contactList[c.WorkspaceID], cp)
		return nil
	})
}

// ContactGet implements driver.Store.
func (s *Store) ContactGet(ctx context.Context, workspaceID, id string) (*messaging.Contact, error) {
	return get(ctx, s, func() (*messaging.Contact, bool) { return s.contactOf(workspaceID, id) }, copyContact)
}

// ContactUpdate implements driver.Store.
func (s *Store) ContactUpdate(ctx context.Context, p *driver.ContactReplaceParams) error {
	return s.update(ctx, func() error {
		c := p.Contact
		cur, ok := s.contactOf(c.WorkspaceID, c.ID)
		switch {
		case !ok:
			return messaging.ErrNotFound
		case cur.Version != p.PrevVersion:
			return driver.ErrStale
		case s.contactClash(c):
			return messaging.ErrConflict
		}
		createdAt, source := cur.CreatedAt, cur.Source
		*cur = *copyContact(c)
		cur.CreatedAt, cur.Source = createdAt, source
		return nil
	})
}

func hasPrefixFold(s, prefix string) bool {
	return strings.HasPrefix(driver.SearchFold(s), prefix)
}

// ContactList implements driver.Store.
func (s *Store) ContactList(ctx context.Context, p *driver.ContactListParams) ([]*messaging.Contact, int, error) {
	unlock, err := s.rlock(ctx)
	if err != nil {
		return nil, 0, err
	}
	defer unlock()
	all := s.contactList[p.WorkspaceID]
	var match []*messaging.Contact
	for i := len(all) - 1; i >= 0; i-- {
		c := all[i]
		if p.Search != "" && !(hasPrefixFold(c.FirstName, p.Search) || hasPrefixFold(c.LastName, p.Search) ||
			hasPrefixFold(c.FullName, p.Search) || strings.HasPrefix(c.EmailKey, p.Search) ||
			(p.PhoneDigits != "" && c.Phone != "" && strings.HasPrefix(driver.PhoneDigits(c.Phone), p.PhoneDigits))) {
			continue
		}
		match = append(match, c)
	}
	sort.SliceStable(match, func(i, j int) bool {
		if !match[i].CreatedAt.Equal(match[j].CreatedAt) {
			return match[i].CreatedAt.After(match[j].CreatedAt)
		}
		return match[i].ID > match[j].ID
	})
	total := len(match)
	if p.Offset >= total {
		return []*messaging.Contact{}, total, nil
	}
	end := min(p.Offset+p.Limit, total)
	out := make([]*messaging.Contact, 0, end-p.Offset)
	for _, c := range match[p.Offset:end] {
		out = append(out, copyContact(c))
	}
	return out, total, nil
}

// templateOf returns the template id of the workspace ws. s.mu is held.
func (s *Store) templateOf(ws, id string) (*messaging.Template, bool) {
	return inWorkspace(s.templates, ws, id, func(t *messaging.Template) string { return t.WorkspaceID })
}

// TemplateCreate implements driver.Store.
func (s *Store) TemplateCreate(ctx context.Context, t *messaging.Template) error {
	return s.update(ctx, func() error {
		clash := func(o *messaging.Template) bool {
			return o.ID == t.ID || (o.WorkspaceID == t.WorkspaceID && o.Name == t.Name && o.Language == t.Language)
		}
		if err := checkNew(s, t.WorkspaceID, maps.Values(s.templates), clash); err != nil {
			return err
		}
		s.templates[t.ID] = copyTemplate(t)
		return nil
	})
}

// TemplateGet implements driver.Store.
func (s *Store) TemplateGet(ctx context.Context, workspaceID, id string) (*messaging.Template, error) {
	return get(ctx, s, func() (*messaging.Template, bool) { return s.templateOf(workspaceID, id) }, copyTemplate)
}

// TemplateGetByName implements driver.Store.
func (s *Store) TemplateGetByName(ctx context.Context, p *driver.TemplateGetByNameParams) (*messaging.Template, error) {
	return get(ctx, s, func() (*messaging.Template, bool) {
		for _, t := range s.templates {
			if t.WorkspaceID == p.WorkspaceID && t.Name == p.Name && t.Language == p.Language {
				return t, true
			}
		}
		return nil, false
	}, copyTemplate)
}

// TemplateList implements driver.Store.
func (s *Store) TemplateList(ctx context.Context, p *driver.TemplateListParams) ([]*messaging.Template, error) {
	return read(ctx, s, func() ([]*messaging.Template, error) {
		out := copiesOf(maps.Values(s.templates), func(t *messaging.Template) bool {
			return t.WorkspaceID == p.WorkspaceID && (p.Status == "" || t.Status == p.Status) &&
				(p.Category == "" || t.Category == p.Category) && (p.Language == "" || t.Language == p.Language)
		}, copyTemplate)
		sort.Slice(out, func(i, j int) bool {
			a, b := out[i], out[j]
			if a.Name != b.Name {
				return a.Name < b.Name
			}
			if a.Language != b.Language {
				return a.Language < b.Language
			}
			return a.ID < b.ID
		})
		return out, nil
	})
}

// TemplateSetStatus implements driver.Store.
func (s *Store) TemplateSetStatus(ctx context.Context, p *driver.TemplateStatusParams) (*messaging.Template, error) {
	return write(ctx, s, func() (*messaging.Template, error) {
		t, ok := s.templateOf(p.WorkspaceID, p.ID)
		if !ok {
			return nil, messaging.ErrNotFound
		}
		if !slices.Contains(p.From, t.Status) {
			return nil, driver.ErrStale
		}
		t.Status, t.StatusReason, t.UpdatedAt = p.To, p.Reason, p.At
		return copyTemplate(t), nil
	})
}

// MessageCreate implements driver.Store.
func (s *Store) MessageCreate(ctx context.Context, m *messaging.Message) (*messaging.Message, bool, error) {
	unlock, err := s.lock(ctx)
	if err != nil {
		return nil, false, err
	}
	defer unlock()
	return s.createMessage(m, true)
}

// MessageReceive implements driver.Store.
func (s *Store) MessageReceive(ctx context.Context, p *driver.MessageReceiveParams) (*messaging.Message, bool, error) {
	unlock, err := s.lock(ctx)
	if err != nil {
		return nil, false, err
	}
	defer unlock()
	stored, created, err := s.createMessage(p.Message, false)
	if created && p.Event != nil {
		s.queueEvent(p.Event)
	}
	return stored, created, err
}

// createMessage is MessageCreate under the lock; with checkOptOut false
// (a received message) a recipient's opt-out does not refuse it.
func (s *Store) createMessage(m *messaging.Message, checkOptOut bool) (*messaging.Message, bool, error) {
	if _, ok := s.workspaces[m.WorkspaceID]; !ok {
		return nil, false, messaging.ErrNotFound
	}
	if _, ok := s.messages[m.ID]; ok {
		return nil, false, messaging.ErrConflict
	}
	if m.IdempotencyKey != "" {
		if prev, ok := s.idem[[2]string{m.WorkspaceID, m.IdempotencyKey}]; ok {
			return prev.Clone(), false, nil
		}
	}
	if sup := s.suppressions[suppressionKey{m.WorkspaceID, m.Channel, m.To}]; checkOptOut && sup != nil && sup.OptedOut {
		return nil, false, &driver.OptedOutError{At: sup.UpdatedAt}
	}
	cp := m.Clone()
	cp.History = nil
	s.keepFallback(m)
	cp.Fallback = nil
	s.messages[m.ID] = cp
	s.wsMessages[m.WorkspaceID] = append(s.wsMessages[m.WorkspaceID], cp)
	if cp.Status == messaging.StatusQueued {
		s.queued[cp.ID] = cp
	}
	if cp.ProviderMessageID != "" {
		s.byProviderID[cp.ProviderMessageID] = cp
	}
	if m.IdempotencyKey != "" {
		s.idem[[2]string{m.WorkspaceID, m.IdempotencyKey}] = cp
	}
	return cp.Clone(), true, nil
}

// messageOf returns the message id of the workspace ws. s.mu is held.
func (s *Store) messageOf(ws, id string) (*messaging.Message, bool) {
	return inWorkspace(s.messages, ws, id, func(m *messaging.Message) string { return m.WorkspaceID })
}

// MessageGet implements driver.Store.
func (s *Store) MessageGet(ctx context.Context, workspaceID, id string) (*messaging.Message, error) {
	return get(ctx, s, func() (*messaging.Message, bool) { return s.messageOf(workspaceID, id) }, (*messaging.Message).Clone)
}

// MessageUpdateStatuses implements driver.Store: every change under
// one hold of the lock.
func (s *Store) MessageUpdateStatuses(ctx context.Context, ps []*driver.MessageStatusParams) ([]driver.MessageStatusResult, error) {
	return write(ctx, s, func() ([]driver.MessageStatusResult, error) {
		out := make([]driver.MessageStatusResult, len(ps))
		for i, p := range ps {
			after, changed, queued, err := s.setStatus(p)
			out[i] = driver.MessageStatusResult{Message: after, Changed: changed, Queued: queued, Err: err}
		}
		return out, nil
	})
}

// setStatus makes one change of MessageUpdateStatuses under the lock and
// returns the message after it, whether it changed and whether it queued
// deliveries.
func (s *Store) setStatus(p *driver.MessageStatusParams) (*messaging.Message, bool, bool, error) {
	m, ok := s.messageOf(p.WorkspaceID, p.ID)
	if !ok {
		return nil, false, false, messaging.ErrNotFound
	}
	if !slices.Contains(p.From, m.Status) || (p.Unclaimed && (m.LeaseOwner != "" || m.UnconfirmedSince != nil)) {
		return m.Clone(), false, false, nil
	}
	m.Status, m.UpdatedAt, m.LeaseOwner, m.UnconfirmedSince = p.To, p.At, "", nil
	m.History = append(m.History, record.StatusChange{Status: p.To, At: p.At.UTC()})
	if p.FailureReason != "" {
		m.FailureReason = p.FailureReason
	}
	if p.ProviderMessageID != "" {
		m.ProviderMessageID = p.ProviderMessageID
		s.byProviderID[m.ProviderMessageID] = m
	}
	if m.Status != messaging.StatusQueued {
		delete(s.queued, m.ID)
	}
	queued := p.Event != nil && s.queueEvent(p.Event)
	return m.Clone(), true, queued, nil
}
