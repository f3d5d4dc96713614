package server_test

import (
	"encoding/json"
	"testing"

	"pvebill/models"
	"pvebill/models/dbtest"
)

// R46: intents are the client's. Two clients own a service 1042; the first previews a
// reinstall and a restore of its own. The second client, on its own 1042, reads neither by id
// (reinstall or restore route) nor as the latest, and cannot apply either: each answer is the
// 404 not_found of an intent that does not exist, never the owner's data and never a 500. The
// owner's intents are untouched and still apply.
func TestIntentsAreTheClients(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			h := newServicesHarness(t, dialect)
			if r := h.signed("PUT", "/v1/admin/plans/ct-bk", "ops", adminSecret, backupPlanBody("local", nil)); r.Status != 201 {
				t.Fatalf("plan: %d %s", r.Status, r.Body)
			}
			id := "1042"
			succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody(id, "ct-bk")))
			succeeded(t, h.otherClient("POST", "/v1/services?wait=20", createBody(id, "ct-bk")))
			base := "/v1/services/" + id

			r := h.billing("POST", base+"/reinstall/preview?wait=10", []byte(`{}`))
			reinst := r.json(t)["intent"].(map[string]any)
			if r.Status != 200 || reinst["state"] != "preview_ready" {
				t.Fatalf("reinstall preview %d %s", r.Status, r.Body)
			}
			op := finished(t, h, h.billing("POST", base+"/backups?wait=20", nil))
			backupID := op["result"].(map[string]any)["backup"].(map[string]any)["id"].(string)
			body, _ := json.Marshal(map[string]string{"backup_id": backupID})
			r = h.billing("POST", base+"/restore/preview?wait=10", body)
			rest := r.json(t)["intent"].(map[string]any)
			if r.Status != 200 || rest["state"] != "preview_ready" {
				t.Fatalf("restore preview %d %s", r.Status, r.Body)
			}

			missingID := models.NewID()
			for _, route := range []struct {
				name   string
				intent map[string]any
			}{{"reinstall", reinst}, {"restore", rest}} {
				intentID := route.intent["id"].(string)
				path := base + "/" + route.name
				// By id: the other client's answer is that of an id that does not exist.
				sameAnswer(t, h.otherClient("GET", path+"/"+intentID, nil), h.otherClient("GET", path+"/"+missingID, nil))
				checkProblem(t, h.otherClient("GET", path+"/"+intentID, nil), 404, "not_found")
				// The latest: the other client has none of its own.
				checkProblem(t, h.otherClient("GET", path, nil), 404, "not_found")
				// Apply with the owner's intent id and confirmations.
				apply := func(intent string) []byte {
					body := map[string]any{"intent_id": intent, "confirmations": route.intent["confirmations"]}
					if route.name == "reinstall" {
						body["root_password"] = reinstallPassword
					}
					raw, _ := json.Marshal(body)
					return raw
				}
				probe := h.otherClient("POST", path, apply(intentID))
				checkProblem(t, probe, 404, "not_found")
				sameAnswer(t, probe, h.otherClient("POST", path, apply(missingID)))
			}
			// Nothing of the other client's probes moved the owner's intents, and no
			// operation was written for the other client's service but its create.
			if ops := dbtest.Count(t, h.db, "SELECT COUNT(*) FROM operations WHERE client_id = ?", "other"); ops != 1 {
				t.Fatalf("the other client has %d operations, want its create only", ops)
			}
			r = h.billing("GET", base+"/restore/"+rest["id"].(string), nil)
			if got := r.json(t)["intent"].(map[string]any); r.Status != 200 || got["state"] != "preview_ready" {
				t.Fatalf("owner's restore intent %d %s", r.Status, r.Body)
			}
			apply, _ := json.Marshal(map[string]any{"intent_id": rest["id"], "confirmations": rest["confirmations"]})
			if done := succeeded(t, h.billing("POST", base+"/restore?wait=20", apply)); done["action"] != "restore" {
				t.Fatalf("owner's restore %v", done)
			}
		})
	}
}
