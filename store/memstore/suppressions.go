package memstore

import (
	"context"
	"slices"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
)

// suppressionKey is (workspace, channel, recipient).
type suppressionKey [3]string

// SuppressionSet implements driver.Store.
func (s *Store) SuppressionSet(ctx context.Context, p *driver.SuppressionSetParams) (bool, error) {
	return write(ctx, s, func() (bool, error) {
		sup := p.Suppression
		if _, ok := s.workspaces[sup.WorkspaceID]; !ok {
			return false, messaging.ErrNotFound
		}
		if s.suppressions == nil {
			s.suppressions = map[suppressionKey]*messaging.Suppression{}
		}
		k := suppressionKey{sup.WorkspaceID, sup.Channel, sup.Recipient}
		cur := s.suppressions[k]
		curOut := cur != nil && cur.OptedOut
		if curOut == sup.OptedOut || (cur != nil && cur.UpdatedAt.After(sup.UpdatedAt)) {
			return false, nil
		}
		cp := *sup
		s.suppressions[k] = &cp
		if p.Event != nil {
			s.queueEvent(p.Event)
		}
		return true, nil
	})
}

// SuppressionList implements driver.Store.
func (s *Store) SuppressionList(ctx context.Context, p *driver.SuppressionListParams) ([]*messaging.Suppression, error) {
	return read(ctx, s, func() ([]*messaging.Suppression, error) {
		var out []*messaging.Suppression
		for k, sup := range s.suppressions {
			if k[0] == p.WorkspaceID && slices.Contains(p.Recipients, k[2]) {
				out = append(out, shallowCopy(sup))
			}
		}
		return out, nil
	})
}
