; threads: two interpreter threads on the same heap, sharing the global
; environment, each allocating (and so collecting) while the main thread
; churns too; join waits in native state (kgc_do_blocking around pthread_join)
(define (iota n) (let loop ((i (- n 1)) (acc '())) (if (< i 0) acc (loop (- i 1) (cons i acc)))))
(define (sum l) (let loop ((l l) (s 0)) (if (null? l) s (loop (cdr l) (+ s (car l))))))
(define (map f l) (if (null? l) '() (cons (f (car l)) (map f (cdr l)))))

(define shared-table (make-vector 2 #f))   ; globals both threads write into
(define result-1 #f)
(define result-2 #f)

; garbage scaled by N (-D N=...): collections while the workers run
(define (garbage k) (let loop ((i 0) (l '())) (if (< i k) (loop (+ i 1) (if (> (length l) 20) '() (cons i l))) i)))

(define (worker id n)
  (lambda ()
    ; a per-thread live list, garbage on the side, a closure over both
    (let loop ((round 0) (acc '()))
      (if (< round 10)
          (begin
            (garbage (quotient N 20))
            (loop (+ round 1) (cons (sum (map (lambda (x) (* x id)) (iota n))) acc)))
          (begin
            ; set! in the shared global environment
            (if (= id 1) (set! result-1 (sum acc)) (set! result-2 (sum acc)))
            (vector-set! shared-table (- id 1) (string-append "worker-" (number->string id)))
            (list id (length acc) (sum acc)))))))

(define t1 (spawn (worker 1 300)))
(define t2 (spawn (worker 2 300)))

; main keeps allocating while they run, and blocks in sleep (native state)
(define (spin n acc) (if (= n 0) (length acc) (spin (- n 1) (cons n (if (> (length acc) 50) '() acc)))))
(display "main spun: ") (display (spin 2000 '())) (newline)
(sleep 5)

(define r1 (join t1))
(define r2 (join t2))
(display "worker 1: ") (display r1) (newline)
(display "worker 2: ") (display r2) (newline)
(display "globals: ") (display (list result-1 result-2)) (newline)
(display "shared: ") (display shared-table) (newline)

; four short-lived threads at once, each counting into its own slot
(define slots (make-vector 4 0))
(define (counter i)
  (lambda ()
    (let loop ((k 0)) (if (< k 500) (begin (vector-set! slots i (+ (vector-ref slots i) 1)) (loop (+ k 1)))))
    i))
(define ts (map (lambda (i) (spawn (counter i))) (iota 4)))
(display "joined: ") (display (map join ts)) (newline)
(display "slots: ") (display slots) (newline)
