namespace orchestra {}
