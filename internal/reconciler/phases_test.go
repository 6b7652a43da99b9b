package reconciler

import (
	"context"
	"errors"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	ctrl "sigs.k8s.io/controller-runtime"
)

type phaseLog struct{ ran []string }

func step(name string, res ctrl.Result, err error) Phase[*phaseLog] {
	return func(_ context.Context, s *phaseLog) (ctrl.Result, error) {
		s.ran = append(s.ran, name)
		return res, err
	}
}

func TestRunPhases(t *testing.T) {
	errA, errB, errDown := errors.New("a failed"), errors.New("b failed"), errors.New("down")
	requeueDown := func(_ context.Context, err error) (time.Duration, bool) {
		return time.Minute, errors.Is(err, errDown)
	}
	tests := []struct {
		name    string
		o       PhaseOptions
		phases  []Phase[*phaseLog]
		wantRan []string
		wantRes ctrl.Result
		wantErr []error
	}{
		{
			name:    "the soonest requeue",
			phases:  []Phase[*phaseLog]{step("a", ctrl.Result{RequeueAfter: time.Hour}, nil), step("b", ctrl.Result{}, nil), step("c", ctrl.Result{RequeueAfter: time.Second}, nil)},
			wantRan: []string{"a", "b", "c"}, wantRes: ctrl.Result{RequeueAfter: time.Second},
		},
		{
			name:    "the first error ends the run",
			phases:  []Phase[*phaseLog]{step("a", ctrl.Result{}, errA), step("b", ctrl.Result{}, errB)},
			wantRan: []string{"a"}, wantErr: []error{errA},
		},
		{
			name:    "All runs every phase and joins the errors",
			o:       PhaseOptions{All: true},
			phases:  []Phase[*phaseLog]{step("a", ctrl.Result{}, errA), step("b", ctrl.Result{RequeueAfter: time.Second}, nil), step("c", ctrl.Result{}, errB)},
			wantRan: []string{"a", "b", "c"}, wantErr: []error{errA, errB},
		},
		{
			name: "Stop ends the run without error",
			phases: []Phase[*phaseLog]{step("a", ctrl.Result{RequeueAfter: time.Hour}, nil), func(_ context.Context, s *phaseLog) (ctrl.Result, error) {
				s.ran = append(s.ran, "b")
				return Stop(nil)
			}, step("c", ctrl.Result{}, errA)},
			wantRan: []string{"a", "b"}, wantRes: ctrl.Result{RequeueAfter: time.Hour},
		},
		{
			name: "Stop with an error",
			o:    PhaseOptions{All: true},
			phases: []Phase[*phaseLog]{func(_ context.Context, s *phaseLog) (ctrl.Result, error) {
				s.ran = append(s.ran, "a")
				return Stop(errA)
			}, step("b", ctrl.Result{}, nil)},
			wantRan: []string{"a", "b"}, wantErr: []error{errA},
		},
		{
			name:    "an error Requeue accepts is a requeue",
			o:       PhaseOptions{All: true, Requeue: requeueDown},
			phases:  []Phase[*phaseLog]{step("a", ctrl.Result{RequeueAfter: time.Hour}, nil), step("b", ctrl.Result{}, errDown), step("c", ctrl.Result{}, nil)},
			wantRan: []string{"a", "b", "c"}, wantRes: ctrl.Result{RequeueAfter: time.Minute},
		},
		{
			name:    "another error wins over the requeue",
			o:       PhaseOptions{All: true, Requeue: requeueDown},
			phases:  []Phase[*phaseLog]{step("a", ctrl.Result{}, errDown), step("b", ctrl.Result{}, errB)},
			wantRan: []string{"a", "b"}, wantErr: []error{errB},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			s := &phaseLog{}
			res, err := RunPhasesWith(context.Background(), s, tt.o, tt.phases...)
			g.Expect(s.ran).To(Equal(tt.wantRan))
			if len(tt.wantErr) == 0 {
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(res).To(Equal(tt.wantRes))
				return
			}
			g.Expect(res).To(Equal(ctrl.Result{}))
			for _, want := range tt.wantErr {
				g.Expect(err).To(MatchError(want))
			}
			g.Expect(errors.Is(err, errDown)).To(BeFalse())
		})
	}
}
