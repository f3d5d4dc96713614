// Package placement decides where a service's guest goes (R52, R2): the node of a create (Place,
// the least full candidate node, the creates in flight counted), its vmid (AllocateVMID,
// reserved in the database before Proxmox confirms it), the node a guest moves to
// (MigrationTarget, for modules/migrate) and the admin node view (Nodes). A cluster's figures
// come from one shared read of /cluster/resources every few seconds (sharedRead), so a burst
// of creates costs the cluster one read.
package placement
