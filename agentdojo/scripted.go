package agentdojo

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/intentplane/intentplane/banking"
)

// ScriptedModel returns a deterministic stand-in for a model behind an
// OpenAI-compatible chat-completions endpoint (POST .../chat/completions),
// for testing Run without a model. It recognises the user task by its
// prompt and calls the task's ground-truth tools, one per turn, then
// answers with the task's expected output ("Done." when it has none). If
// obey is true it also obeys an injection: once a tool result holds an
// injection task's goal, it makes that task's ground-truth calls right
// away, then resumes the user's. If apiKey is not empty, a request without
// "Authorization: Bearer <apiKey>" gets 401. A request it cannot decode
// gets 400; an unknown prompt gets an answer without tool calls.
func ScriptedModel(obey bool, apiKey string) http.Handler {
	tasks := UserTasks()
	injections := InjectionTasks()
	env := Environment(nil)
	return scripted(apiKey, func(req chatRequest) (chatMessage, error) {
		return scriptedReply(req, tasks, injections, env, obey)
	})
}

// scripted serves a stand-in's replies over the chat-completions API, as
// ScriptedModel describes.
func scripted(apiKey string, reply func(chatRequest) (chatMessage, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
			http.Error(w, "POST .../chat/completions only", http.StatusNotFound)
			return
		}
		if apiKey != "" && r.Header.Get("Authorization") != "Bearer "+apiKey {
			http.Error(w, `{"error": {"message": "invalid API key"}}`, http.StatusUnauthorized)
			return
		}
		var req chatRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
			return
		}
		msg, err := reply(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "scripted", "object": "chat.completion", "model": req.Model,
			"choices": []map[string]any{{"index": 0, "message": msg, "finish_reason": "stop"}},
		})
	})
}

// scriptedReply is the stand-in's next message for req: the next call of
// its plan, or its answer.
func scriptedReply(req chatRequest, tasks []*UserTask, injections []*InjectionTask, env banking.Account, obey bool) (chatMessage, error) {
	var ut *UserTask
	turn, exposed := 0, -1
	var it *InjectionTask
	for _, m := range req.Messages {
		switch m.Role {
		case "user":
			for _, t := range tasks {
				if m.Content != nil && *m.Content == t.Prompt {
					ut = t
				}
			}
		case "assistant":
			if len(m.ToolCalls) > 0 {
				turn++
			}
		case "tool":
			if it != nil || !obey || m.Content == nil {
				continue
			}
			for _, cand := range injections {
				if seenGoal(*m.Content, cand.Goal) {
					it, exposed = cand, turn
				}
			}
		}
	}
	if ut == nil {
		return chatMessage{Role: "assistant", Content: text("I cannot help with that.")}, nil
	}
	plan := ut.Calls
	if it != nil {
		plan = slices.Concat(ut.Calls[:exposed], it.Calls(env), ut.Calls[exposed:])
	}
	return planned(plan, turn, ut.Output)
}

// planned is the message at turn of a plan: its call, or, past its end,
// the answer ("Done." when empty).
func planned(plan []Call, turn int, answer string) (chatMessage, error) {
	if turn >= len(plan) {
		return answerMessage(answer), nil
	}
	return callMessage(turn, plan[turn].Function, plan[turn].Args)
}

// answerMessage is the stand-in's final answer ("Done." when empty).
func answerMessage(answer string) chatMessage {
	if answer == "" {
		answer = "Done."
	}
	return chatMessage{Role: "assistant", Content: text(answer)}
}

// callMessage is the stand-in's message at turn that calls function fn
// with args.
func callMessage(turn int, fn string, args map[string]any) (chatMessage, error) {
	b, err := json.Marshal(args)
	if err != nil {
		return chatMessage{}, err
	}
	var tc toolCall
	tc.ID, tc.Type = fmt.Sprintf("call_%d", turn), "function"
	tc.Function.Name, tc.Function.Arguments = fn, string(b)
	return chatMessage{Role: "assistant", ToolCalls: []toolCall{tc}}, nil
}

// seenGoal reports whether a tool result holds goal, as text or as JSON
// escapes it.
func seenGoal(content, goal string) bool {
	if strings.Contains(content, goal) {
		return true
	}
	b, _ := json.Marshal(goal)
	return strings.Contains(content, strings.Trim(string(b), `"`))
}
