; (heap-histogram [type-name ...]): kgc_heap_histogram's table (after a
; full collection: live objects only), here restricted to two types this
; program allocates a known number of: 37 boxed integers (beyond the fixnum
; range) in a vector, and 5 weak tables kept of the 25 made.
(define v (make-vector 37 0))
(define (fill i)
  (if (< i 37)
      (begin (vector-set! v i (+ 4611686018427387000 i 1000)) (fill (+ i 1)))))
(fill 0)
(define tables '())
(define (tabs i)
  (if (< i 25)
      (let ((t (make-weak-table)))
        (weak-table-set! t v i)
        (if (< i 5) (set! tables (cons t tables)))
        (tabs (+ i 1)))))
(tabs 0)
; garbage of both types, dead before the histogram's collection
(define (junk i) (if (> i 0) (begin (+ 4611686018427387000 i 1000) (junk (- i 1)))))
(junk 500)
(heap-histogram "int" "weak-table")
; dropping the vector leaves the tables
(set! v 0)
(heap-histogram "int" "weak-table")
(set! tables '())
(heap-histogram "weak-table")
