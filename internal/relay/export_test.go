package relay

// StillOpen lists the connections whose harness's end still takes
// writes: none may, once the relay has ended.
func StillOpen(r *Relay) []uint32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ids []uint32
	for id, c := range r.conns {
		if _, err := c.local.Write([]byte("x")); err == nil {
			ids = append(ids, id)
		}
	}
	return ids
}
