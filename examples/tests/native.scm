; native: calls through libkgc-native (kgc_native.h)
;   byte-sum        critical native ([B)I through a prepared entry (kgc_native_entry):
;                   the byte array is pinned, no copy
;   native-length   regular native ([B)I: reads the array through the env;
;                   throws (ThrowNew) on a null argument
;   string-reverse  regular native ([B)[B: allocates its result through the env
;   native-hash     regular native found by lazy lookup (Java_klisp_Natives_fnv),
;                   reads the bytes with GetPrimitiveArrayCritical
(define s "The quick brown fox")
(display (byte-sum s)) (newline)
(display (native-length s)) (newline)
(display (string-reverse s)) (newline)
(display (native-hash "kgc")) (newline)
(display (native-length '())) (newline)

; natives interleaved with allocation: every string moves between calls
(define (make-strings n)
  (let loop ((i 0) (acc '()))
    (if (= i n) acc (loop (+ i 1) (cons (make-string (+ 1 (remainder i 50)) (+ 97 (remainder i 26))) acc)))))
(define strs (make-strings 2000))
(define (total f l) (let loop ((l l) (s 0)) (if (null? l) s (loop (cdr l) (+ s (f (car l)))))))
(display "sum of byte sums: ") (display (total byte-sum strs)) (newline)
(gc)
(display "sum of lengths: ") (display (total native-length strs)) (newline)
(display "reversed ok: ")
(display (let loop ((l strs)) (cond ((null? l) #t)
                                    ((string=? (car l) (string-reverse (string-reverse (car l)))) (loop (cdr l)))
                                    (else #f))))
(newline)
(display "hashes equal: ")
(display (= (native-hash (string-append "k" "gc")) (native-hash "kgc"))) (newline)
; a big string: its own (humongous) region, pinned for the critical call
(define big (make-string 3000000 1))
(display (byte-sum big)) (newline)
