; basics: numbers, recursion, closures, lists, vectors, strings, control forms
(define (fib n) (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2)))))
(display "fib 15 = ") (display (fib 15)) (newline)

(define (fact n) (if (= n 0) 1 (* n (fact (- n 1)))))
(display "fact 20 = ") (display (fact 20)) (newline)

; closures capture their environment and outlive the call that made them
(define (make-counter)
  (let ((n 0))
    (lambda () (set! n (+ n 1)) n)))
(define c1 (make-counter))
(define c2 (make-counter))
(c1) (c1) (c2)
(display (list (c1) (c2))) (newline)

(define (map f l) (if (null? l) '() (cons (f (car l)) (map f (cdr l)))))
(define (filter p l)
  (cond ((null? l) '())
        ((p (car l)) (cons (car l) (filter p (cdr l))))
        (else (filter p (cdr l)))))
(define (fold f acc l) (if (null? l) acc (fold f (f acc (car l)) (cdr l))))
(define (iota n) (let loop ((i (- n 1)) (acc '())) (if (< i 0) acc (loop (- i 1) (cons i acc)))))
(define (reverse l) (fold (lambda (acc x) (cons x acc)) '() l))

(display (map (lambda (x) (* x x)) (iota 10))) (newline)
(display (filter (lambda (x) (= 0 (remainder x 3))) (iota 20))) (newline)
(display (fold + 0 (iota 1001))) (newline)
(display (reverse '(a b c d))) (newline)

; a tail-recursive loop of 10000 iterations runs in constant C stack
(define (count-up i n) (if (= i n) i (count-up (+ i 1) n)))
(display (count-up 0 10000)) (newline)

; variadic lambda, apply, and/or, while
(define (sum . xs) (apply + xs))
(display (sum 1 2 3 4 5)) (newline)
(display (list (and 1 2 3) (and 1 #f 3) (or #f #f) (or #f 7))) (newline)
(define i 0)
(define acc '())
(while (< i 5) (set! acc (cons i acc)) (set! i (+ i 1)))
(display acc) (newline)

; vectors are reference arrays, strings are byte arrays
(define v (make-vector 5 0))
(let loop ((i 0)) (if (< i 5) (begin (vector-set! v i (* i 10)) (loop (+ i 1)))))
(display v) (newline)
(define s (string-append "hello" ", " "world"))
(write s) (display " ") (display (string-length s)) (display " ") (display (substring s 7 12)) (newline)
(display (string=? "abc" (string-append "a" "bc"))) (newline)
(display (equal? (list 1 (list 2 (vector 3 "x"))) (list 1 (list 2 (vector 3 "x"))))) (newline)
(display (number->string 12345)) (newline)
(write (symbol->string 'lisp)) (newline)
(display (eq? 'foo (string->symbol (string-append "f" "oo")))) (newline)
