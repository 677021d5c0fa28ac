package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/intentplane/intentplane/core/mandate"

	"github.com/intentplane/intentplane/agentdojo"
)

// report is what each agentdojo evaluation command prints.
type report interface {
	WriteJSON(w io.Writer) error
	WriteTable(w io.Writer) error
}

func printReport(e *env, r report, asJSON bool) error {
	if asJSON {
		return r.WriteJSON(e.stdout)
	}
	return r.WriteTable(e.stdout)
}

type adaptiveCmd struct {
	Suite string  `default:"banking" enum:"banking,workspace,slack,travel" help:"Suite to attack (banking, workspace, slack or travel)."`
	Data  string  `env:"INTENTPLANE_AGENTDOJO_DATA" placeholder:"DIR" help:"AgentDojo's suite data, for --suite workspace, slack or travel (as agentdojo replay --data)."`
	JSON  bool    `help:"Print a JSON object instead of a table."`
	Seed  uint64  `default:"1" help:"Seed of the approver's draws (used when --p or --q is strictly between 0 and 1)."`
	P     float64 `default:"0" help:"Probability that the approver approves a wrong step-up (0: the ideal approver)."`
	Q     float64 `default:"0" help:"Probability that the approver rejects a right step-up."`
}

func (c *adaptiveCmd) Run(e *env) error {
	if c.P < 0 || c.P > 1 || c.Q < 0 || c.Q > 1 {
		return fmt.Errorf("agentdojo adaptive: --p and --q are probabilities, between 0 and 1")
	}
	r, err := agentdojo.Adaptive(e.ctx, agentdojo.AdaptiveOptions{Suite: c.Suite, Seed: c.Seed, P: c.P, Q: c.Q, DataDir: c.Data})
	if err != nil {
		return fmt.Errorf("agentdojo adaptive: %w", err)
	}
	return printReport(e, r, c.JSON)
}

type sweepCmd struct {
	Suite string    `default:"banking" enum:"banking,workspace" help:"Suite to sweep (banking or workspace)."`
	Data  string    `env:"INTENTPLANE_AGENTDOJO_DATA" placeholder:"DIR" help:"AgentDojo's suite data, for --suite workspace (as agentdojo replay --data)."`
	JSON  bool      `help:"Print a JSON object instead of a table."`
	Seed  uint64    `default:"1" help:"Seed of the approver's draws: the same seed gives the same report."`
	Reps  int       `default:"5" help:"Seeded repetitions per point."`
	P     []float64 `name:"p" placeholder:"P,..." help:"Probabilities that the approver approves a wrong step-up (default 0,0.01,0.05,0.1,0.2,0.3,0.5,0.75,1)."`
	Q     float64   `default:"0.05" help:"Probability that the approver rejects a right step-up."`
	Mode  string    `default:"known_counterparties" enum:"known_counterparties,strict" help:"Mode of the mandates."`
}

func (c *sweepCmd) Run(e *env) error {
	if c.Reps < 1 {
		return fmt.Errorf("agentdojo sweep: --reps must be at least 1")
	}
	r, err := agentdojo.Sweep(e.ctx, agentdojo.SweepOptions{
		Suite: c.Suite, DataDir: c.Data, Mode: mandate.Mode(c.Mode), Ps: c.P, Q: c.Q, Reps: c.Reps, Seed: c.Seed,
	})
	if err != nil {
		return fmt.Errorf("agentdojo sweep: %w", err)
	}
	return printReport(e, r, c.JSON)
}

type registryCmd struct {
	Suite string `default:"banking" enum:"banking,workspace" help:"Suite (banking: the beneficiaries registry; workspace: the counterparties, the addresses of the mail, calendar and drive)."`
	Data  string `env:"INTENTPLANE_AGENTDOJO_DATA" placeholder:"DIR" help:"AgentDojo's suite data, for --suite workspace (as agentdojo replay --data)."`
	JSON  bool   `help:"Print a JSON object instead of a table."`
	Seed  uint64 `default:"1" help:"Seed of the orders of removal: the same seed gives the same report."`
	Reps  int    `default:"5" help:"Seeded repetitions (orders of removal) per k."`
	K     []int  `name:"k" placeholder:"K,..." help:"Percentages of the legitimate counterparties removed (default 0,25,50,75,100)."`
}

func (c *registryCmd) Run(e *env) error {
	if c.Reps < 1 {
		return fmt.Errorf("agentdojo registry: --reps must be at least 1")
	}
	r, err := agentdojo.Registry(e.ctx, agentdojo.RegistryOptions{Suite: c.Suite, DataDir: c.Data, Ks: c.K, Reps: c.Reps, Seed: c.Seed})
	if err != nil {
		return fmt.Errorf("agentdojo registry: %w", err)
	}
	return printReport(e, r, c.JSON)
}

type runCmd struct {
	Suite         string `default:"banking" enum:"banking,workspace" help:"Suite to run (banking or workspace)."`
	Data          string `env:"INTENTPLANE_AGENTDOJO_DATA" placeholder:"DIR" help:"AgentDojo's suite data, for --suite workspace (as agentdojo replay --data)."`
	JSON          bool   `help:"Print a JSON object instead of a table."`
	Model         string `placeholder:"NAME" help:"Model name sent to the endpoint (required unless --scripted)."`
	BaseURL       string `name:"base-url" placeholder:"URL" help:"Base URL of an OpenAI-compatible chat-completions API, such as https://api.openai.com/v1 or http://127.0.0.1:11434/v1 (Ollama); required unless --scripted."`
	APIKeyEnv     string `name:"api-key-env" default:"OPENAI_API_KEY" placeholder:"VAR" help:"Environment variable holding the API key (sent as a bearer token; none if unset or empty)."`
	Seed          uint64 `default:"1" help:"Seed sent with each request (temperature 0), for the servers that honour it."`
	UserTask      []int  `name:"user-task" placeholder:"N,..." help:"Run only these user tasks (default all: 16 banking, 40 workspace)."`
	InjectionTask []int  `name:"injection-task" placeholder:"N,..." help:"Run only these injection tasks (default all: 9 banking, 14 workspace)."`
	MaxTurns      int    `name:"max-turns" default:"20" help:"Model calls per run at most."`
	Mode          string `default:"known_counterparties" enum:"known_counterparties,strict" help:"Mode of the mandates."`
	NoGateway     bool   `name:"no-gateway" help:"Call the suite's tools directly, without intentplane (no defence)."`
	Scripted      string `enum:",obey,user" default:"" help:"Instead of a model, start a deterministic stand-in on 127.0.0.1 that obeys injected instructions (obey) or follows only the user (user)."`
}

func (c *runCmd) Run(e *env) error {
	opts := agentdojo.RunOptions{
		Suite: c.Suite, DataDir: c.Data, Model: c.Model, BaseURL: c.BaseURL, APIKey: os.Getenv(c.APIKeyEnv), Seed: c.Seed,
		UserTasks: c.UserTask, InjectionTasks: c.InjectionTask, MaxTurns: c.MaxTurns, Mode: mandate.Mode(c.Mode), NoGateway: c.NoGateway,
	}
	if c.Scripted != "" {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return fmt.Errorf("agentdojo run: %w", err)
		}
		h := agentdojo.ScriptedModel(c.Scripted == "obey", "")
		if c.Suite == "workspace" {
			dir := c.Data
			if dir == "" {
				dir = agentdojo.DataDir()
			}
			data, err := agentdojo.LoadWorkspaceData(dir)
			if err != nil {
				return fmt.Errorf("agentdojo run: %w", err)
			}
			h = agentdojo.ScriptedWorkspaceModel(data, c.Scripted == "obey", "")
		}
		srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
		opts.BaseURL, opts.APIKey = "http://"+ln.Addr().String()+"/v1", ""
		if opts.Model == "" {
			opts.Model = "scripted-" + c.Scripted
		}
	}
	r, err := agentdojo.Run(e.ctx, opts)
	if err != nil {
		return fmt.Errorf("agentdojo run: %w", err)
	}
	return printReport(e, r, c.JSON)
}
