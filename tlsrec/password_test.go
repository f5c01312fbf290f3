package tlsrec

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"testing"
)

// A wrong password for a legacy encrypted PEM key passes the format's
// padding check about once in 256 tries and decrypts to garbage: that is
// still the wrong password, not a key that fails to parse later.
func TestLegacyKeyWrongPasswordThatPassesPadding(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	//lint:ignore SA1019 the legacy format is what the test needs
	block, err := x509.EncryptPEMBlock(rand.Reader, "PRIVATE KEY", der, []byte("sesame"), x509.PEMCipherAES256)
	if err != nil {
		t.Fatal(err)
	}
	data := pem.EncodeToMemory(block)
	if _, err := privateKeyPEM(data, "sesame"); err != nil {
		t.Fatalf("the right password: %v", err)
	}
	for i := 0; i < 20000; i++ {
		password := fmt.Sprint("wrong-", i)
		//lint:ignore SA1019 as above
		if _, err := x509.DecryptPEMBlock(block, []byte(password)); err != nil {
			continue // the padding check caught it, as it mostly does
		}
		if _, err := privateKeyPEM(data, password); !errors.Is(err, errPassword) {
			t.Fatalf("a wrong password that passes the padding check: %v, want the password error", err)
		}
		return
	}
	t.Fatal("no wrong password passed the padding check in 20000 tries")
}
