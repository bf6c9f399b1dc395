; fixnums: integers in [-2^62, 2^62) are tagged immediates (2n+1 in the slot,
; kgc_options.tag_mask = 1), so arithmetic on them allocates nothing
; ((int-boxes) counts integers allocated in the heap), and they come back
; unchanged from every place a reference can be: pairs, vectors, closures,
; globals, frames - across young and full collections (moving everything
; around them). Only integers outside that range are boxed.
(define (fib n) (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2)))))
(define b0 (int-boxes))
(display "fib 16 = ") (display (fib 16)) (newline)
(define (count-down n acc) (if (= n 0) acc (count-down (- n 1) (+ acc (* n 3)))))
(display "sum = ") (display (count-down 5000 0)) (newline)
(display "integers boxed by small arithmetic: ") (display (- (int-boxes) b0)) (newline)

; the edges: 2^62 - 1 is the largest fixnum, one more is boxed
(define big 4611686018427387903)
(define b1 (int-boxes))
(display (list big (- 0 big 1) (+ big 1) (- 0 big 2))) (newline)
(display "boxed at the edges: ") (display (- (int-boxes) b1)) (newline)
(display (list (= (+ big 1) (+ big 1)) (eq? 7 7) (equal? (+ big 1) (+ 1 big)) (number? -5))) (newline)
(display (list (quotient -17 5) (remainder -17 5) (* -3 -4) (- 5))) (newline)

; fixnums held by the heap while everything moves
(define (iota n) (let loop ((i (- n 1)) (acc '())) (if (< i 0) acc (loop (- i 1) (cons i acc)))))
(define v (make-vector 1000 0))
(let loop ((i 0)) (if (< i 1000) (begin (vector-set! v i (- (* i i) 500000)) (loop (+ i 1)))))
(define l (iota 2000))
(define (make-adder k) (lambda (x) (+ x k)))
(define add-big (make-adder (- big 10)))
(define (sum-list l acc) (if (null? l) acc (sum-list (cdr l) (+ acc (car l)))))
(define (sum-vec v i acc) (if (= i (vector-length v)) acc (sum-vec v (+ i 1) (+ acc (vector-ref v i)))))
(define (churn n) (if (> n 0) (begin (cons n n) (churn (- n 1)))))
(define (check why)
  (display why) (display ": ")
  (display (list (sum-list l 0) (sum-vec v 0 0) (vector-ref v 999) big (add-big 3))) (newline))
(check "before")
(gc-young)
(check "after a young GC")
(churn 5000)
(check "after churn")
(gc)
(check "after a full GC")
(display "eq-hash of a fixnum is its value's: ") (display (= (eq-hash 12345) (eq-hash (+ 12340 5)))) (newline)

; (+ a b) and the other binary arithmetic and comparisons on two fixnums
; allocate nothing, not even an argument list: two loops that differ only
; by such calls allocate the same number of objects ((alloc-count): objects
; this thread allocated)
(define (loop0 n) (if (> n 0) (begin n n n (loop0 (- n 1)))))
(define (loop1 n) (if (> n 0) (begin (+ n 1) (* n 3) (< n 7) (loop1 (- n 1)))))
(define (allocs-of f) (let ((c0 (alloc-count))) (f 1000) (- (alloc-count) c0)))
(display "objects allocated by 3000 binary fixnum operations: ")
(display (- (allocs-of loop1) (allocs-of loop0))) (newline)
; the same calls on a boxed integer, or with three arguments, still work
(display (list (+ big 1 -1) (< 1 2 3) (- big 1) (* 2 3) (= 5 (+ 2 3)) (>= 3 3) (<= 4 3)))
(newline)
