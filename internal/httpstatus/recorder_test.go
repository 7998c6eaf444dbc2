package httpstatus_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/candorkit/candor/internal/httpstatus"
)

func TestRecorder(t *testing.T) {
	cases := []struct {
		name    string
		handler func(w http.ResponseWriter)
		want    int
	}{
		{"nothing written", func(http.ResponseWriter) {}, 0},
		{"body only", func(w http.ResponseWriter) { w.Write([]byte("x")) }, http.StatusOK},
		{"explicit header", func(w http.ResponseWriter) { w.WriteHeader(http.StatusTeapot) }, http.StatusTeapot},
		{"first header wins", func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusNotFound)
			w.WriteHeader(http.StatusOK)
		}, http.StatusNotFound},
		{"header then body", func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte("no"))
		}, http.StatusUnauthorized},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			under := httptest.NewRecorder()
			rec := &httpstatus.Recorder{ResponseWriter: under}
			c.handler(rec)
			if rec.Status != c.want {
				t.Errorf("Status = %d, want %d", rec.Status, c.want)
			}
		})
	}
}

func TestRecorderFlushes(t *testing.T) {
	under := httptest.NewRecorder()
	rec := &httpstatus.Recorder{ResponseWriter: under}
	if err := http.NewResponseController(rec).Flush(); err != nil {
		t.Fatalf("Flush through ResponseController: %v", err)
	}
	if !under.Flushed {
		t.Error("the underlying writer was not flushed")
	}
}

func ExampleRecorder() {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no bearer token", http.StatusUnauthorized)
	})
	rec := &httpstatus.Recorder{ResponseWriter: httptest.NewRecorder()}
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/mcp", nil))
	fmt.Println(rec.Status)
	// Output: 401
}
