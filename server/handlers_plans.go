package server

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"pvebill/modules/plans"
)

// PlanView is the API shape of a plan (docs/api.md Plan): the plan and, for each guest type it
// offers, its capabilities with reasons in the request's language.
type PlanView struct {
	plans.Plan
	Capabilities map[plans.GuestType]map[plans.Capability]CapabilityView `json:"capabilities"`
}

// CapabilityView is one capability: available, or refused with a permanence and a reason.
type CapabilityView struct {
	Available bool   `json:"available"`
	Refusal   string `json:"refusal,omitempty"`
	Reason    string `json:"reason,omitempty"`
}

func (s *Server) planView(p plans.Plan, lang string) PlanView {
	caps := s.plans.Capabilities(p)
	v := PlanView{Plan: p, Capabilities: make(map[plans.GuestType]map[plans.Capability]CapabilityView, len(caps))}
	for t, set := range caps {
		m := make(map[plans.Capability]CapabilityView, len(set))
		for c, st := range set {
			m[c] = CapabilityView{Available: st.Available, Refusal: string(st.Refusal), Reason: st.Message(lang)}
		}
		v.Capabilities[t] = m
	}
	return v
}

func (s *Server) listPlans(c *gin.Context) error {
	list, err := s.plans.List(c.Request.Context())
	if err != nil {
		return err
	}
	l := lang(c)
	views := make([]PlanView, 0, len(list))
	for _, p := range list {
		views = append(views, s.planView(p, l))
	}
	writeJSON(c, http.StatusOK, gin.H{"plans": views})
	return nil
}

func (s *Server) getPlan(c *gin.Context) error {
	p, err := s.plans.Get(c.Request.Context(), c.Param("code"))
	if err != nil {
		return err
	}
	writeJSON(c, http.StatusOK, gin.H{"plan": s.planView(p, lang(c))})
	return nil
}

// putPlan creates (201) or replaces (200) a plan; the code in the path wins.
func (s *Server) putPlan(c *gin.Context) error {
	var spec plans.Spec
	if err := bindJSON(c, &spec); err != nil {
		return err
	}
	p, created, err := s.plans.Put(c.Request.Context(), c.Param("code"), spec)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
		c.Header("Location", "/v1/plans/"+p.Code)
	}
	writeJSON(c, status, gin.H{"plan": s.planView(p, lang(c))})
	return nil
}

func (s *Server) deletePlan(c *gin.Context) error {
	if err := s.plans.Delete(c.Request.Context(), c.Param("code")); err != nil {
		return err
	}
	c.Status(http.StatusNoContent)
	return nil
}
