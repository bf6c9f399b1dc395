; Takeuchi's function, repeated N times: comparisons, subtraction, deep calls
(define (tak x y z) (if (not (< y x)) z (tak (tak (- x 1) y z) (tak (- y 1) z x) (tak (- z 1) x y))))
(define (rep n acc) (if (= n 0) acc (rep (- n 1) (+ acc (tak 18 12 6)))))
(display (rep N 0)) (newline)
