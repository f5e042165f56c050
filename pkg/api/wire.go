package api

import (
	"time"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/apierr"
)

// wireWarnings converts rotation warnings to the generated type.
func wireWarnings(ws []apierr.Warning) *[]gen.Warning {
	if len(ws) == 0 {
		return nil
	}
	out := make([]gen.Warning, len(ws))
	for i, w := range ws {
		t, _ := time.Parse(time.RFC3339, w.RotateBy)
		out[i] = gen.Warning{Code: gen.WarningCode(w.Code), Message: w.Message, Hint: w.Hint, RotateBy: t, DocsUrl: w.DocsURL}
	}
	return &out
}

// testData is the "data" object test-mode answers add.
func testData(eventID, programID int64) *gen.TestModeData {
	return &gen.TestModeData{EventId: &eventID, ProgramId: &programID, TestMode: true}
}

func ptr[T any](v T) *T { return &v }
