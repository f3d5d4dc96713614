package models

// ServiceKey names one service. A service id is unique per client, not across clients (R46):
// two clients may both have a service "1042", so a service is always found by its client and
// its id together.
type ServiceKey struct {
	ClientID  string
	ServiceID string
}

// keyCond is the condition selecting a key's rows in a table that has client_id and service_id.
const keyCond = "client_id = ? AND service_id = ?"

// Key is the service's key.
func (s *Service) Key() ServiceKey { return ServiceKey{ClientID: s.ClientID, ServiceID: s.ServiceID} }

// Key is the key of the operation's service.
func (o *Operation) Key() ServiceKey { return ServiceKey{ClientID: o.ClientID, ServiceID: o.ServiceID} }

// Key is the key of the intent's service.
func (in *Intent) Key() ServiceKey { return ServiceKey{ClientID: in.ClientID, ServiceID: in.ServiceID} }

// Key is the key of the bucket's service.
func (b UsageBucket) Key() ServiceKey {
	return ServiceKey{ClientID: b.ClientID, ServiceID: b.ServiceID}
}
