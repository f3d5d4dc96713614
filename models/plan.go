package models

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// Plan is one saved plan: the validated plan as JSON (modules/plans owns its shape), where it
// came from (file | api) and when it was written.
type Plan struct {
	Code      string `gorm:"primaryKey"`
	Source    string
	Body      string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// TableName pins the table.
func (Plan) TableName() string { return "plans" }

// SavePlan inserts or replaces the plan with this code and reports whether it was created.
// Columns are written explicitly, never through a struct update that would skip zero values.
// Two concurrent first saves of one code both succeed: the loser of the insert updates instead.
func SavePlan(ctx context.Context, tx *gorm.DB, code, source, body string) (created bool, err error) {
	now := Now()
	update := func() (bool, error) {
		res := tx.WithContext(ctx).Model(&Plan{}).Where("code = ?", code).
			Updates(map[string]any{"source": source, "body": body, "updated_at": now})
		return res.RowsAffected > 0, res.Error
	}
	if found, err := update(); err != nil || found {
		return false, err
	}
	err = tx.WithContext(ctx).Create(&Plan{Code: code, Source: source, Body: body, CreatedAt: now, UpdatedAt: now}).Error
	if errors.Is(err, ErrDuplicate) {
		_, err = update()
		return false, err
	}
	return err == nil, err
}

// SavePlans saves every plan in one transaction (all or none), each as SavePlan does. Replicas
// starting together import the same plans at once: MariaDB may pick one of their transactions as
// a deadlock victim, which is retried.
func (db *DB) SavePlans(ctx context.Context, plans []Plan) error {
	return retryDeadlock(ctx, func() error {
		return db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			for _, p := range plans {
				if _, err := SavePlan(ctx, tx, p.Code, p.Source, p.Body); err != nil {
					return fmt.Errorf("save plan %s: %w", p.Code, err)
				}
			}
			return nil
		})
	})
}

// GetPlan reads one plan; ErrNotFound when there is none.
func GetPlan(ctx context.Context, tx *gorm.DB, code string) (*Plan, error) {
	var p Plan
	err := pooled(ctx, tx).Where("code = ?", code).Take(&p).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// ListPlans reads every plan, ordered by code.
func ListPlans(ctx context.Context, tx *gorm.DB) ([]Plan, error) {
	var out []Plan
	err := tx.WithContext(ctx).Order("code").Find(&out).Error
	return out, err
}

// DeletePlan removes a plan; ErrNotFound when there was none.
func DeletePlan(ctx context.Context, tx *gorm.DB, code string) error {
	res := tx.WithContext(ctx).Where("code = ?", code).Delete(&Plan{})
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}
