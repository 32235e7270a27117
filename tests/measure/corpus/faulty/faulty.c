/* The faulty kernels have no meaningful C version; this stub only satisfies the layout. */
int main(void) { return 1; }
