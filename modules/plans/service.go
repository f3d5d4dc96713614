package plans

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"pvebill/i18n"
	"pvebill/models"
)

// Options configure a Service.
type Options struct {
	// Clusters are the configured clusters and their nodes; nil accepts any names.
	Clusters Clusters
	// Built is what the guest modules implement, per guest type (capabilities).
	Built Built
	// Storages, when set, reads the plan's cluster's storages when a plan is saved: the
	// backup_storage is checked against them (R42) and the storage's type kept with the plan,
	// from which the snapshot capability follows (R44). Nil: no check, the type unknown.
	Storages Storages
	// ConsoleUsers, when set, tells which clusters have a console user: a plan of a cluster
	// without one refuses the console (R41). Nil: every cluster has one.
	ConsoleUsers ConsoleUsers
	// NoConsoleSecret says that console.secret is not set: every plan refuses the console
	// (R41), permanently, naming the setting.
	NoConsoleSecret bool
}

// Service reads and writes plans in the database. Every write is validated first; nothing
// invalid is ever stored.
type Service struct {
	db   *models.DB
	opts Options
}

// NewService returns a Service over db.
func NewService(db *models.DB, opts Options) *Service {
	return &Service{db: db, opts: opts}
}

// Validate checks a Spec against the configured clusters (see the package function Validate).
func (s *Service) Validate(spec Spec) (Plan, error) { return Validate(spec, s.opts.Clusters) }

// Capabilities computes the capabilities of each guest type the plan offers, the console's
// refined by whether the plan's cluster has a console user and console.secret is set.
func (s *Service) Capabilities(p Plan) map[GuestType]Set {
	caps := CapabilitiesOf(p, s.opts.Built)
	consoleCapability(caps, p, s.opts)
	return caps
}

// List returns every plan, ordered by code.
func (s *Service) List(ctx context.Context) ([]Plan, error) {
	rows, err := s.db.ListPlans(ctx)
	if err != nil {
		return nil, fmt.Errorf("list plans: %w", err)
	}
	out := make([]Plan, 0, len(rows))
	for _, r := range rows {
		p, err := decodeRow(r)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// Get returns one plan, or a 404 not_found problem.
func (s *Service) Get(ctx context.Context, code string) (Plan, error) {
	row, err := s.db.GetPlan(ctx, code)
	if errors.Is(err, models.ErrNotFound) {
		return Plan{}, i18n.NewProblem(http.StatusNotFound, i18n.CodeNotFound)
	}
	if err != nil {
		return Plan{}, fmt.Errorf("get plan %s: %w", code, err)
	}
	return decodeRow(*row)
}

// Put validates spec as the plan with this code and saves it (source api), reporting whether
// it was created. The code in the path wins: a spec naming another code is refused, one naming
// none takes this one.
func (s *Service) Put(ctx context.Context, code string, spec Spec) (Plan, bool, error) {
	if spec.Code != "" && spec.Code != code {
		return Plan{}, false, i18n.Validation(i18n.FieldError{Field: "code", Code: i18n.FieldOneOf, Param: code})
	}
	spec.Code = code
	p, err := s.Validate(spec)
	if err != nil {
		return Plan{}, false, err
	}
	if err := s.readStorages(ctx, &p); err != nil {
		return Plan{}, false, err
	}
	row, err := encodeRow(p, SourceAPI)
	if err != nil {
		return Plan{}, false, err
	}
	created, err := s.db.SavePlan(ctx, row.Code, row.Source, row.Body)
	if err != nil {
		return Plan{}, false, fmt.Errorf("save plan %s: %w", p.Code, err)
	}
	return p, created, nil
}

// readStorages reads the plan's cluster's storages once for everything a save needs of them:
// the backup storage is checked (R42) and the storage's type kept with the plan (R44). Without
// the option nothing is read or checked.
func (s *Service) readStorages(ctx context.Context, p *Plan) error {
	if s.opts.Storages == nil {
		return nil
	}
	stores, err := s.opts.Storages(ctx, p.Cluster)
	p.StorageType = storageType(*p, stores)
	return checkBackupStorage(*p, stores, err)
}

// Delete removes a plan, or answers a 404 not_found problem.
func (s *Service) Delete(ctx context.Context, code string) error {
	err := s.db.DeletePlan(ctx, code)
	if errors.Is(err, models.ErrNotFound) {
		return i18n.NewProblem(http.StatusNotFound, i18n.CodeNotFound)
	}
	if err != nil {
		return fmt.Errorf("delete plan %s: %w", code, err)
	}
	return nil
}

// Import validates every spec and, only if all are valid and their codes distinct, saves them
// in one transaction with the given source. Plans already stored and not named here are left
// alone. The error names the entry (by position and code) that was refused.
func (s *Service) Import(ctx context.Context, specs []Spec, src Source) ([]Plan, error) {
	plans := make([]Plan, 0, len(specs))
	seen := map[string]int{}
	for i, spec := range specs {
		if j, dup := seen[spec.Code]; dup && spec.Code != "" {
			return nil, fmt.Errorf("plan %d (%s): the same code as plan %d", i+1, spec.Code, j+1)
		}
		seen[spec.Code] = i
		p, err := s.Validate(spec)
		if err == nil {
			// A cluster that cannot be asked at start does not stop the import: the storage
			// is checked again by every backup (vzdump refuses a storage without backups).
			if err = s.readStorages(ctx, &p); isUnavailable(err) {
				err = nil
			}
		}
		if err != nil {
			return nil, fmt.Errorf("plan %d (%s): %w", i+1, spec.Code, err)
		}
		plans = append(plans, p)
	}
	rows := make([]models.Plan, 0, len(plans))
	for _, p := range plans {
		row, err := encodeRow(p, src)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	if err := s.db.SavePlans(ctx, rows); err != nil {
		return nil, err
	}
	return plans, nil
}

// LoadFile reads plans_file (a YAML list of plan objects) and imports it with source file.
func (s *Service) LoadFile(ctx context.Context, path string) ([]Plan, error) {
	specs, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	out, err := s.Import(ctx, specs, SourceFile)
	if err != nil {
		return nil, fmt.Errorf("plans_file %s: %w", path, err)
	}
	return out, nil
}

// encodeRow is the row a plan is stored as: the validated plan as JSON, with its source.
func encodeRow(p Plan, src Source) (models.Plan, error) {
	body, err := json.Marshal(p)
	if err != nil {
		return models.Plan{}, fmt.Errorf("encode plan %s: %w", p.Code, err)
	}
	return models.Plan{Code: p.Code, Source: string(src), Body: string(body)}, nil
}

func decodeRow(r models.Plan) (Plan, error) {
	var p Plan
	if err := json.Unmarshal([]byte(r.Body), &p); err != nil {
		return Plan{}, fmt.Errorf("decode plan %s: %w", r.Code, err)
	}
	if p.Nodes == nil {
		p.Nodes = []string{}
	}
	return p, nil
}
