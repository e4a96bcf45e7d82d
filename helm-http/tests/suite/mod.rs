mod health;
