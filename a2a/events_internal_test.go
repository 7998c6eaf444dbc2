package a2a

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	a2apb "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// a2a-go deep-copies the whole task (gob) twice for every event the executor
// yields, which is most of the facade's cost. A blocking SendMessage
// therefore stores its task once, in its final state; with returnImmediately
// the working task is stored first, since that is what the caller gets back.
func TestTaskEventsPerSend(t *testing.T) {
	const token = "tok-events-secret"
	release := make(chan struct{}, 1)
	ts := httptest.NewUnstartedServer(nil)
	srv, err := NewServer(Agent{
		Name: "n", Description: "d", URL: "http://" + ts.Listener.Addr().String() + "/a2a",
		Skill: Skill{ID: "s", Name: "s", Description: "s"},
	}, BackendFunc(func(ctx context.Context, q Question) Outcome {
		<-release
		return Answer("42")
	}), WithVerifier(VerifierFunc(func(ctx context.Context, tok string) (Caller, error) {
		return Caller{Subject: "s-" + tok, Issuer: "https://op.test"}, nil
	})))
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = srv
	ts.Start()
	defer ts.Close()

	send := func(msgID string, immediate bool) a2apb.TaskID {
		t.Helper()
		cfg := ""
		if immediate {
			cfg = `,"configuration":{"returnImmediately":true}`
		}
		body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"` + msgID + `","role":"ROLE_USER","parts":[{"text":"q"}]}` + cfg + `}}`
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/a2a", strings.NewReader(body))
		req.Header.Set("A2A-Version", "1.0")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		var out struct {
			Result struct {
				Task struct {
					ID string `json:"id"`
				} `json:"task"`
			} `json:"result"`
		}
		if err := json.Unmarshal(b, &out); err != nil || out.Result.Task.ID == "" {
			t.Fatalf("SendMessage: %v: %s", err, b)
		}
		return a2apb.TaskID(out.Result.Task.ID)
	}
	ctx, cc := a2asrv.NewCallContext(context.Background(), nil)
	cc.User = a2asrv.NewAuthenticatedUser(callerOwner(Caller{Subject: "s-" + token, Issuer: "https://op.test"}), nil)
	stored := func(id a2apb.TaskID) (a2apb.TaskState, int) {
		t.Helper()
		st, err := srv.TaskStore().Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return st.Task.Status.State, int(st.Version)
	}

	release <- struct{}{}
	id := send("m-1", false)
	if state, writes := stored(id); state != a2apb.TaskStateCompleted || writes != 1 {
		t.Fatalf("blocking send: %s after %d writes, want completed after 1", state, writes)
	}

	id = send("m-2", true)
	if state, writes := stored(id); state != a2apb.TaskStateWorking || writes != 1 {
		t.Fatalf("returnImmediately send: %s after %d writes, want working after 1", state, writes)
	}
	release <- struct{}{}
	// The execution ends asynchronously: poll the store with a deadline.
	for deadline := time.Now().Add(10 * time.Second); ; {
		state, writes := stored(id)
		if state == a2apb.TaskStateCompleted && writes == 2 {
			break
		}
		if state != a2apb.TaskStateWorking || time.Now().After(deadline) {
			t.Fatalf("returnImmediately task: %s after %d writes, want completed after 2", state, writes)
		}
	}
}
