; churn: a live structure (a 5000-element list, a 1000-element vector of
; strings, a closure chain) survives N iterations that cons garbage
; (N from -D N=..., 1000000 by default in run-check.sh)
(define (iota n) (let loop ((i (- n 1)) (acc '())) (if (< i 0) acc (loop (- i 1) (cons i acc)))))
(define (sum l) (let loop ((l l) (s 0)) (if (null? l) s (loop (cdr l) (+ s (car l))))))

(define live (iota 5000))
(define names (make-vector 1000 #f))
(let loop ((i 0))
  (if (< i 1000)
      (begin (vector-set! names i (string-append "name-" (number->string i)))
             (loop (+ i 1)))))
(define (adder k) (lambda (x) (+ x k)))
(define adders (let loop ((i 0) (acc '())) (if (= i 100) acc (loop (+ i 1) (cons (adder i) acc)))))

; the garbage: N cons cells (and N boxed integers), a short list kept at a time
(define (churn n)
  (let loop ((i 0) (keep '()) (len 0))
    (cond ((= i n) len)
          ((= len 100) (loop (+ i 1) (cons i '()) 1))
          (else (loop (+ i 1) (cons i keep) (+ len 1))))))
(define before (gc-count))
(display "churn: ") (display (churn N)) (newline)
(display "collected: ") (display (> (gc-count) before)) (newline)

; the live structure is intact after moving (young and full collections)
(gc)
(display "live sum: ") (display (sum live)) (newline)
(display "names: ") (display (vector-ref names 0)) (display " ")
(display (vector-ref names 999)) (newline)
(display "adders: ") (display (let loop ((l adders) (s 0)) (if (null? l) s (loop (cdr l) ((car l) s))))) (newline)
(define total 0)
(let loop ((i 0))
  (if (< i 1000)
      (begin (set! total (+ total (string-length (vector-ref names i)))) (loop (+ i 1)))))
(display "name bytes: ") (display total) (newline)

; deep non-tail recursion: C frames of rooted slots, all updated by each collection
(define (build n) (if (= n 0) '() (cons (make-string 10 65) (build (- n 1)))))
(display "deep: ") (display (length (build 1000))) (newline)
