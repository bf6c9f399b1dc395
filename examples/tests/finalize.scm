; finalization through a reference queue: (finalize obj thunk) runs thunk
; once obj is dead - between top-level forms, or in (run-finalizers) - on
; the interpreter's thread. The thunk must not refer to obj: here it is
; made outside the scope that holds the "port".
(define closed 0)
(define (on-close) (set! closed (+ closed 1)))
(define (open-port n)
  (let ((p (make-string 64 65)))
    (finalize p on-close)
    n))
(define (loop i) (if (< i 100) (begin (open-port i) (loop (+ i 1)))))
(loop 0)
(gc)
(run-finalizers)
(display closed) (newline)
; a live object's thunk does not run; once dead, it runs after the form
; that collected (so run-finalizers finds nothing left)
(define keep (make-string 8 66))
(finalize keep (lambda () (display "keep finalized") (newline)))
(gc)
(display (run-finalizers)) (newline)
(display "dropping keep") (newline)
(set! keep 0)
(gc)
(display (run-finalizers)) (newline)
; (gc-stats): pauses the pause-end hook saw, max and total microseconds
(define s (gc-stats))
(display (>= (car s) 3)) (newline)
(display (<= (car (cdr s)) (car (cdr (cdr s))))) (newline)
