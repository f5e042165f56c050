package localcluster

// Pid is the replica's current process id, 0 when it does not run: the webhook tests tell which replica
// sent a delivery by the process that owns the connection's socket.
func (r *Replica) Pid() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd == nil {
		return 0
	}
	return r.cmd.Process.Pid
}
