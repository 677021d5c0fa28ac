package agentdojo_test

import (
	"net/http/httptest"
	"testing"

	"github.com/intentplane/intentplane/agentdojo"
)

// TestRunWorkspace drives the agent loop over HTTP against the workspace
// stand-ins for user tasks 13 (mails a colleague), 25 (mails the people of
// a meeting) and 36 (creates a file) under injection tasks 4 (the
// Facebook code), 9 (the unread mail, then a ransom note to self), 11 (the
// five largest files) and 13 (phishing every participant of today's
// meetings). The stand-in that obeys the injection wins 11 of 12 without
// the gateway (36 x 11 cannot be won even then: AgentDojo's check counts
// files) with 69 off-task writes, and none through it, where each of those
// writes is refused and every task keeps its utility; the one that
// follows only the user makes no off-task call.
func TestRunWorkspace(t *testing.T) {
	t.Parallel()
	data, err := agentdojo.LoadWorkspaceData(agentdojo.DataDir())
	if err != nil {
		t.Fatal(err)
	}
	obey := httptest.NewServer(agentdojo.ScriptedWorkspaceModel(data, true, "k-test"))
	t.Cleanup(obey.Close)
	user := httptest.NewServer(agentdojo.ScriptedWorkspaceModel(data, false, ""))
	t.Cleanup(user.Close)
	base := agentdojo.RunOptions{Suite: "workspace", Model: "scripted", APIKey: "k-test", UserTasks: []int{13, 25, 36}, InjectionTasks: []int{4, 9, 11, 13}}
	runStandIns(t, obey.URL, user.URL, base, [3]runTotals{
		{12, 11, 0, 69, 0, 3, 0},
		{12, 0, 12, 0, 69, 3, 0},
		{12, 0, 12, 0, 0, 3, 0},
	}, func(t *testing.T, r *agentdojo.RunReport) {
		checkReport(t, r, []string{"suite", "rows", "attacker_calls_refused"}, "AgentDojo v1.2 workspace, model scripted")
	})
}
