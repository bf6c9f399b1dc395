; fib(N): integer arithmetic and calls (N=30 in the bench: 1.6 million calls)
(define (fib n) (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2)))))
(display (fib N)) (newline)
