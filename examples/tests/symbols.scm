; symbols: the symbol table holds its symbols weakly (kgc_weak_new/get), so a
; symbol nothing references is collected and its entry dropped; the global
; environment is keyed by the identity hash (kgc_identity_hash), which stays
; the same while objects move
(define (iota n) (let loop ((i (- n 1)) (acc '())) (if (< i 0) acc (loop (- i 1) (cons i acc)))))
(define (map f l) (if (null? l) '() (cons (f (car l)) (map f (cdr l)))))
(define (gensym i) (string->symbol (string-append "g" (number->string i))))

(define base (symbol-count))
(define kept (map gensym (iota 300)))         ; referenced: must survive
(let loop ((i 300)) (if (< i 3000) (begin (gensym i) (loop (+ i 1)))))  ; dropped
(display "interned: ") (display (>= (- (symbol-count) base) 300)) (newline)
(gc)
(define after (- (symbol-count) base))
(display "after gc, at least the kept ones: ") (display (>= after 300)) (newline)
(display "dropped ones collected: ") (display (< after 1000)) (newline)
; a kept symbol is still the same object when re-interned after moving
(display "identity: ") (display (eq? (car (cdr kept)) (gensym 1))) (newline)

; eq-hash survives moves
(define p (cons 1 2))
(define h (eq-hash p))
(gc-young) (gc)
(display "eq-hash stable: ") (display (= h (eq-hash p))) (newline)
(display "eq-hash differs: ") (display (not (= (eq-hash p) (eq-hash (cons 1 2))))) (newline)

; globals defined through freshly interned symbols are found again by name
(define g42 'forty-two)
(gc)
(display "global via symbol: ") (display g42) (newline)
(display (eq? 'g42 (string->symbol "g42"))) (newline)
