; weak-key tables on ephemerons: an entry lives while its key is reachable
; from elsewhere; its value keeps nothing alive, not even a value that
; refers back to its own key, or to another entry's key that refers back.
(define tbl (make-weak-table))
(define kept '())
; 100 keys (fresh strings), each value a pair holding its own key; every
; fourth key is also kept in a list
(define (fill i)
  (if (< i 100)
      (let ((k (make-string 4 (+ 65 (remainder i 26)))))
        (weak-table-set! tbl k (cons k i))
        (if (= (remainder i 4) 0) (set! kept (cons k kept)))
        (fill (+ i 1)))))
(fill 0)
(gc)
(display "after a full GC: ") (display (weak-table-count tbl)) (newline)
; the values of the kept keys live only through the table
(define (sum-values l acc)
  (if (null? l) acc
      (let ((v (weak-table-ref tbl (car l) #f)))
        (sum-values (cdr l) (+ acc (cdr v) (if (eq? (car v) (car l)) 0 1000000))))))
(display "values of kept keys: ") (display (sum-values kept 0)) (newline)

; values reachable only through the table survive young collections and churn
(define (churn n) (if (> n 0) (begin (cons n n) (churn (- n 1)))))
(gc-young)
(churn 3000)
(gc-young)
(display "after young GCs: ") (display (sum-values kept 0)) (newline)

; a cycle through two entries: a's value holds b, b's value holds a
(define t2 (make-weak-table))
(define (pairs i)
  (if (< i 10)
      (let ((a (make-string 1 97)) (b (make-string 1 98)))
        (weak-table-set! t2 a (list b i))
        (weak-table-set! t2 b (list a i))
        (if (= i 3) (set! kept (cons a kept)))
        (pairs (+ i 1)))))
(pairs 0)
(gc)
; only the pair whose a is kept: a alive -> its value -> b alive -> b's value
(display "cross-referencing entries after a full GC: ") (display (weak-table-count t2)) (newline)
(define a3 (car kept))
(define b3 (car (weak-table-ref t2 a3 #f)))
(display (list (car (cdr (weak-table-ref t2 a3 #f))) (eq? (car (weak-table-ref t2 b3 #f)) a3)))
(newline)

; ref of a missing key, overwrite, remove, fixnum and () values
(display (weak-table-ref tbl "not a key" 'none)) (newline)
(define k0 (car kept))
(weak-table-set! t2 k0 42)
(display (weak-table-ref t2 k0 #f)) (newline)
(weak-table-set! t2 k0 '())
(display (weak-table-ref t2 k0 #f)) (newline)
(display (list (weak-table-remove! t2 k0) (weak-table-remove! t2 k0) (weak-table-ref t2 k0 'gone)))
(newline)
(display "after remove: ") (display (weak-table-count t2)) (newline)

; dropping the kept keys empties the tables
(set! kept '())
(set! a3 #f)
(set! b3 #f)
(set! k0 #f)
(gc)
(display (list (weak-table-count tbl) (weak-table-count t2))) (newline)

; two interpreter threads share a table: 400 entries, half the keys kept by the
; threads' results, then one thread's dropped
(define shared (make-weak-table))
(define (worker base)
  (lambda ()
    (let loop ((i 0) (keep '()))
      (if (< i 200)
          (let ((k (cons base i)))
            (weak-table-set! shared k (list k (make-string 16 65)))
            (loop (+ i 1) (if (= (remainder i 2) 0) (cons k keep) keep)))
          keep))))
(define t1 (spawn (worker 1)))
(define t2 (spawn (worker 2)))
(define k1 (join t1))
(define k2 (join t2))
(gc)
(display (list (weak-table-count shared) (length k1) (length k2))) (newline)
(set! k1 '())
(gc)
(display (weak-table-count shared)) (newline)
