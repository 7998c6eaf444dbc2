package httpstatus

import "net/http"

// Recorder is an http.ResponseWriter that remembers the first status written.
type Recorder struct {
	http.ResponseWriter
	// Status is the status code sent, or 0 if nothing was written yet.
	Status int
}

// WriteHeader records code the first time and passes it on.
func (r *Recorder) WriteHeader(code int) {
	if r.Status == 0 {
		r.Status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

// Write records an implicit 200 when no header was written, then writes p.
func (r *Recorder) Write(p []byte) (int, error) {
	if r.Status == 0 {
		r.Status = http.StatusOK
	}
	return r.ResponseWriter.Write(p)
}

// Flush flushes the underlying writer when it can.
func (r *Recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap returns the wrapped writer, for http.ResponseController.
func (r *Recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
