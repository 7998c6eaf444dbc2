package n8n_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/n8n"
	"github.com/candorkit/candor/n8n/n8ntest"
)

// restoreFaults (on the fake only) fails every step of a deploy that the
// faults table does not, and every step of the restore that follows: a
// failed restore is StateInconsistent, never a success; one that completes
// serves (or leaves offline) exactly what was there before.
func (en *env) restoreFaults(t *testing.T) {
	f := en.inst.Fake
	type faultCase struct {
		name string
		// inactive starts from an inactive workflow (else a live one).
		inactive bool
		// active is DeployOptions.Active (nil keeps the activation).
		active *bool
		inject func(ctx context.Context, id n8n.ID)
		want   n8n.DeployState
		step   string
	}
	on, off := true, false
	fail := func(op n8ntest.FakeOp) func() {
		return func() { f.FailNext(op, http.StatusInternalServerError, "boom") }
	}
	before := func(op n8ntest.FakeOp, fn func()) func() { return func() { f.Before(op, fn) } }
	both := func(fns ...func()) func() {
		return func() {
			for _, fn := range fns {
				fn()
			}
		}
	}
	deactivate := func(ctx context.Context, id n8n.ID) func() {
		return func() {
			_, _, err := en.inst.Do(ctx, http.MethodPost, "/api/v1/workflows/"+string(id)+"/deactivate", nil)
			assert.NoError(t, err)
		}
	}
	cases := []faultCase{
		{name: "edition probe", inject: func(context.Context, n8n.ID) { fail(n8ntest.OpListCredentials)() },
			want: n8n.StateUnchanged, step: "detect"},
	}
	if en.ed == n8n.Edition1 {
		refused := func() { f.FailNext(n8ntest.OpActivate, http.StatusBadRequest, "refused") }
		cases = append(cases,
			faultCase{name: "re-read after the deactivate", inject: func(context.Context, n8n.ID) {
				before(n8ntest.OpDeactivate, fail(n8ntest.OpGet))()
			}, want: n8n.StateRestored, step: "verify-deactivated"},
			faultCase{name: "re-read after the activate", inject: func(context.Context, n8n.ID) {
				before(n8ntest.OpActivate, fail(n8ntest.OpGet))()
			}, want: n8n.StateRestored, step: "verify-active"},
			faultCase{name: "another writer deactivates after the activate", inject: func(ctx context.Context, id n8n.ID) {
				before(n8ntest.OpActivate, before(n8ntest.OpGet, deactivate(ctx, id)))()
			}, want: n8n.StateRestored, step: "verify-active"},
			faultCase{name: "the restore's re-read", inject: func(context.Context, n8n.ID) {
				both(refused, before(n8ntest.OpActivate, fail(n8ntest.OpGet)))()
			}, want: n8n.StateInconsistent, step: "activate"},
			faultCase{name: "the restore's update", inject: func(context.Context, n8n.ID) {
				both(refused, before(n8ntest.OpActivate, fail(n8ntest.OpUpdate)))()
			}, want: n8n.StateInconsistent, step: "activate"},
			faultCase{name: "the restore's re-read after its update", inject: func(context.Context, n8n.ID) {
				both(refused, before(n8ntest.OpActivate, before(n8ntest.OpUpdate, fail(n8ntest.OpGet))))()
			}, want: n8n.StateInconsistent, step: "activate"},
			faultCase{name: "the restore's last re-read", inject: func(context.Context, n8n.ID) {
				both(refused, before(n8ntest.OpActivate, before(n8ntest.OpActivate, fail(n8ntest.OpGet))))()
			}, want: n8n.StateInconsistent, step: "activate"},
			faultCase{name: "the restore's deactivate", inject: func(context.Context, n8n.ID) {
				before(n8ntest.OpActivate, before(n8ntest.OpGet, both(fail(n8ntest.OpGet), fail(n8ntest.OpDeactivate))))()
			}, want: n8n.StateInconsistent, step: "verify-active"},
			faultCase{name: "an inactive workflow's activation re-read", inactive: true, active: &on,
				inject: func(context.Context, n8n.ID) {
					before(n8ntest.OpActivate, fail(n8ntest.OpGet))()
				}, want: n8n.StateRestored, step: "verify-active"},
		)
	} else {
		cases = append(cases,
			faultCase{name: "the live publication record", inject: func(context.Context, n8n.ID) {
				fail(n8ntest.OpPublicationStatus)()
			}, want: n8n.StateUnchanged, step: "read-publication"},
			faultCase{name: "re-read after the publish", inject: func(context.Context, n8n.ID) {
				before(n8ntest.OpPublish, fail(n8ntest.OpGet))()
			}, want: n8n.StateRestored, step: "verify-published"},
			faultCase{name: "the restore's publication record", inject: func(context.Context, n8n.ID) {
				before(n8ntest.OpPublish, both(fail(n8ntest.OpGet),
					before(n8ntest.OpPublish, fail(n8ntest.OpPublicationStatus))))()
			}, want: n8n.StateInconsistent, step: "verify-published"},
			faultCase{name: "unpublish", active: &off, inject: func(context.Context, n8n.ID) {
				fail(n8ntest.OpUnpublish)()
			}, want: n8n.StateRestored, step: "unpublish"},
			faultCase{name: "re-read after the unpublish", active: &off, inject: func(context.Context, n8n.ID) {
				before(n8ntest.OpUnpublish, fail(n8ntest.OpGet))()
			}, want: n8n.StateRestored, step: "verify-unpublished"},
			faultCase{name: "the unpublish's record", active: &off, inject: func(context.Context, n8n.ID) {
				before(n8ntest.OpUnpublish, fail(n8ntest.OpPublicationStatus))()
			}, want: n8n.StateRestored, step: "settle-unpublish"},
			faultCase{name: "an inactive workflow's publish re-read", inactive: true, active: &on,
				inject: func(context.Context, n8n.ID) {
					before(n8ntest.OpPublish, fail(n8ntest.OpGet))()
				}, want: n8n.StateRestored, step: "verify-published"},
			faultCase{name: "the restore's unpublish", inactive: true, active: &on,
				inject: func(context.Context, n8n.ID) {
					before(n8ntest.OpPublish, both(fail(n8ntest.OpGet), fail(n8ntest.OpUnpublish)))()
				}, want: n8n.StateInconsistent, step: "verify-published"},
		)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := ctxT(t)
			path := "restore-" + uuid.NewString()
			var wf *n8n.Workflow
			var id n8n.ID
			if tc.inactive {
				wf = webhookWorkflow(t, "Restore", path, answerCode("before"))
				created, err := en.c.CreateWorkflow(ctx, wf)
				require.NoError(t, err)
				id = created.ID
			} else {
				wf, id = en.liveWorkflow(t, ctx, "Restore", path, "before")
			}
			next := wf.Clone()
			setCode(t, next, answerCode("after"))
			tc.inject(ctx, id)
			rep, err := n8n.Deploy(ctx, en.c, id, next, en.opts(n8n.DeployOptions{Active: tc.active}))
			logReport(t, rep)
			var de *n8n.DeployError
			require.ErrorAs(t, err, &de)
			assert.Equal(t, tc.step, de.Step)
			assert.Equal(t, tc.want, rep.State)
			w := en.stored(t, ctx, id)
			if rep.After.Read {
				assert.Equal(t, rep.After.Active, w["active"], "the Report's activation is not n8n's")
			}
			if rep.State == n8n.StateRestored || rep.State == n8n.StateUnchanged {
				assert.Equal(t, !tc.inactive, w["active"], "restored, but the activation changed")
				// Two calls: the first lets a publication settle.
				_, _ = n8n.CallWebhook(ctx, en.hookURL(path), "subject", map[string]string{"q": "x"})
				r, err := n8n.CallWebhook(ctx, en.hookURL(path), "subject", map[string]string{"q": "x"})
				if tc.inactive {
					assert.Error(t, err, "restored to inactive, yet the webhook answers")
				} else if assert.NoError(t, err) {
					assert.Equal(t, "before", r.Answer, "restored, but n8n serves another version")
				}
			}
			en.remove(t, ctx, id)
		})
	}
}
