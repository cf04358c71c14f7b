Todos los seres humanos nacen libres e iguales en dignidad y derechos.
Todo individuo tiene derecho a la vida, a la libertad y a la seguridad de su persona.
Nadie estará sometido a esclavitud ni a servidumbre.
