namespace experiments {}
