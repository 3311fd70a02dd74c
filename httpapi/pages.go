package httpapi

// pageJSON is the one envelope of every cursor-paged list the spec leaves
// open (/v1 and /admin/v1 alike): {"data": [...], "next_cursor": "..."},
// next_cursor null on the last page. The spec fixes two other list shapes:
// GET /v1/templates is a bare array and GET /v1/contacts is
// {items, total, page, limit, totalPages}.
type pageJSON[T any] struct {
	// Data is the page's items; [] (never null) when there are none.
	Data []T `json:"data"`
	// NextCursor is the cursor of the next page, null on the last.
	NextCursor *string `json:"next_cursor"`
}

// page returns the envelope of items with the store's next cursor, empty
// on the last page.
func page[T any](items []T, next string) pageJSON[T] {
	if items == nil {
		items = []T{}
	}
	return pageJSON[T]{Data: items, NextCursor: nextCursor(next)}
}

// nextCursor is the next_cursor of a page: null for the store's empty
// cursor (the last page).
func nextCursor(c string) *string {
	if c == "" {
		return nil
	}
	return &c
}
